# The desktop app (issue 8): headless tests of the window, its what-if recompute and the
# scenario form. They run on Qt's offscreen platform (set by the tests when unset).
# QTest types keys into the controls as a user does (Qt6Test is part of qt6-base-dev).
find_package(Qt6 REQUIRED COMPONENTS Test)
capsim_test(capsim_gui_tests
  SOURCES gui/whatif_test.cpp gui/window_test.cpp gui/planner_test.cpp
  LIBS capsim_gui_app Qt6::Widgets Qt6::Charts Qt6::Test)
