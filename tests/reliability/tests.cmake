# Issue 10: bad inputs, limits, concurrent storage and finite numbers. These run the real
# capsim binary (CAPSIM_BINARY) as users do; the long libFuzzer runs are in fuzz/ (not ctest).
capsim_test(capsim_reliability_tests
  SOURCES reliability/bad_inputs_test.cpp reliability/storage_test.cpp reliability/finite_output_test.cpp
          reliability/regressions_test.cpp reliability/issue22_test.cpp
          reliability/invariants_test.cpp reliability/examples_golden_test.cpp
          reliability/issue47_io_test.cpp reliability/issue47_injection_test.cpp
  LIBS capsim_scenarios nlohmann_json::nlohmann_json SQLite::SQLite3)
target_compile_definitions(capsim_reliability_tests PRIVATE CAPSIM_BINARY="$<TARGET_FILE:capsim>"
                           CAPSIM_DOCS_DIR="${CMAKE_SOURCE_DIR}/docs")
add_dependencies(capsim_reliability_tests capsim)
