capsim_test(capsim_fabric_tests
  SOURCES fabric/topology_test.cpp fabric/timing_test.cpp
  LIBS capsim_fabric capsim_models)
