#!/bin/sh
# no_cxx.sh - stands for tests/unit/test_cxx when configure found no C++
# compiler: the header test cannot be built here.
echo "no C++11 compiler was found by configure (apt-get install g++): the C++ header test is skipped"
exit 77
