// Stand-in for the tests' test_interfaces.h: the flag a codelet copies
// back when it finds wrong data.
struct test_config { int copy_failed; };
