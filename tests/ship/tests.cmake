# Issue 21: shipping. The installed tree runs on its own; the container image and the Debian
# package name the packages capsim really links.
add_test(NAME ship.install COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/ship/install_test.sh ${CMAKE_BINARY_DIR} ${CMAKE_SOURCE_DIR})
add_test(NAME ship.dockerfile
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/ship/dockerfile_test.sh ${CMAKE_SOURCE_DIR} $<TARGET_FILE:capsim>)
set_tests_properties(ship.install ship.dockerfile PROPERTIES LABELS ship)

# Issue 53: the Debian package that CPack builds from this build: lintian reports no error or
# warning, `man capsim` and every command's page read after installing it (dpkg-deb -x), and it
# carries the copyright, changelog, cluster examples and completion scripts. cpack, lintian and
# man come from ./setup.sh test; without them the test reports itself skipped.
add_test(NAME ship.package COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/ship/package_test.sh ${CMAKE_BINARY_DIR} ${CMAKE_SOURCE_DIR})
set_tests_properties(ship.package PROPERTIES SKIP_RETURN_CODE 77 LABELS ship)

# Issue 53: the completion scripts complete option values: every --format, fixed values, GPU
# ids and node types from the catalog (bash; zsh and fish where installed).
add_test(NAME ship.completion
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/ship/completion_test.sh $<TARGET_FILE:capsim> ${CMAKE_SOURCE_DIR})
set_tests_properties(ship.completion PROPERTIES SKIP_RETURN_CODE 77 LABELS ship)

# Every shipped example x every export target validates against the receiving tool's schemas
# or is refused as docs/exports.md documents (tests/exports/validate_exports.mjs). The npm
# packages are installed by ./setup.sh test; without them the test reports itself skipped.
find_program(CAPSIM_NODE node)
if(CAPSIM_NODE)
  add_test(NAME exports.validate
           COMMAND ${CAPSIM_NODE} ${CMAKE_CURRENT_SOURCE_DIR}/exports/validate_exports.mjs $<TARGET_FILE:capsim>
                   ${CMAKE_SOURCE_DIR}/scenarios/examples ${CMAKE_SOURCE_DIR}/docs/exports.md
                   ${CMAKE_BINARY_DIR}/exports-npm)
  set_tests_properties(exports.validate PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600 LABELS ship)
  # Every cluster scenario's `capsim plan --export k8s|karpenter` against Kubernetes', Karpenter's,
  # JobSet's and Kueue's published schemas (tests/exports/validate_cluster_exports.mjs).
  add_test(NAME exports.validate-cluster
           COMMAND ${CAPSIM_NODE} ${CMAKE_CURRENT_SOURCE_DIR}/exports/validate_cluster_exports.mjs $<TARGET_FILE:capsim>
                   ${CMAKE_SOURCE_DIR}/scenarios/clusters ${CMAKE_SOURCE_DIR}/docs/exports.md ${CMAKE_BINARY_DIR}/exports-npm)
  set_tests_properties(exports.validate-cluster PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600 LABELS ship)
else()
  message(STATUS "capsim: no node; the export schema tests (exports.validate, exports.validate-cluster) are not registered")
endif()

# JUnit files (a passing run, a failed expectation, bad input) validate against the Jenkins
# xUnit plugin's JUnit schema (tests/ship/junit/junit-10.xsd) with xmllint.
add_test(NAME ship.junit COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/ship/junit_test.sh $<TARGET_FILE:capsim> ${CMAKE_SOURCE_DIR})
set_tests_properties(ship.junit PROPERTIES SKIP_RETURN_CODE 77 LABELS ship)

# The README shows what capsim prints now: every console example rerun, and every accuracy
# figure its prose marks recomputed (tools/readme/rerun.py --check prints the difference; run
# it without --check to rewrite them). Python's standard library only.
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  add_test(NAME ship.readme
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_SOURCE_DIR}/tools/readme/rerun.py --check
                   --db ${CMAKE_BINARY_DIR}/readme-rerun.db $<TARGET_FILE:capsim>)
  set_tests_properties(ship.readme PROPERTIES LABELS ship TIMEOUT 900)
else()
  message(STATUS "capsim: no python3; the README rerun test (ship.readme) is not registered")
endif()

# Issue 53: every JSON output (run, size, simulate, cost, estimate, compare of every shipped
# example; plan of every cluster; accuracy; memory, models, validate, history, catalog and sweeps)
# validates against its published schema
# (docs/output-schemas/, `capsim schema --output NAME`) with python3-jsonschema, and documents
# with a key removed, an unknown key or a wrong type fail. Without python3-jsonschema (./setup.sh
# test installs it) the test reports itself skipped.
if(Python3_Interpreter_FOUND)
  add_test(NAME ship.output-schemas
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/ship/output_schemas_test.py $<TARGET_FILE:capsim>
                   ${CMAKE_SOURCE_DIR})
  set_tests_properties(ship.output-schemas PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 900 LABELS ship)
endif()
