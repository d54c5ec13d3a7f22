capsim_test(capsim_des_tests
  SOURCES des/queueing_test.cpp des/validation_test.cpp des/accuracy_test.cpp
          des/kernel_test.cpp des/cdf_test.cpp des/random_test.cpp des/quantile_sketch_test.cpp
  LIBS capsim_core)
