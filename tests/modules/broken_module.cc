// A library that cannot load: it needs a symbol nobody defines.
extern "C" int ferry_test_symbol_that_does_not_exist(void);
extern "C" int ferry_test_broken_entry(void) { return ferry_test_symbol_that_does_not_exist(); }
