# capsim-calibrate's plain C++ parts (statistics, JSON writer) are compiled straight into
# this suite, so it builds and runs without CUDA; the rest tests the import, the GEMM-curve
# fit, the models' switch to measured figures and the CLI on synthetic profiles.
set(CAPSIM_CALIBRATE_SRC ${CMAKE_SOURCE_DIR}/hardware_catalog/calibration/src)
capsim_test(capsim_calibration_tests
  SOURCES calibration/stats_test.cpp calibration/profile_json_test.cpp calibration/import_test.cpp
          calibration/models_test.cpp calibration/cli_test.cpp
          ${CAPSIM_CALIBRATE_SRC}/stats.cpp ${CAPSIM_CALIBRATE_SRC}/profile_json.cpp
  LIBS capsim_models capsim_hardware nlohmann_json::nlohmann_json)
target_include_directories(capsim_calibration_tests PRIVATE ${CAPSIM_CALIBRATE_SRC})
target_compile_definitions(capsim_calibration_tests PRIVATE CAPSIM_BINARY="$<TARGET_FILE:capsim>")
add_dependencies(capsim_calibration_tests capsim)
