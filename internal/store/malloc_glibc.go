//go:build linux && cgo

package store

/*
#include <malloc.h>

// limit_arenas caps glibc's malloc arenas; 0 where the C library has no
// such setting (musl).
static int limit_arenas(int n) {
#ifdef M_ARENA_MAX
	return mallopt(M_ARENA_MAX, n);
#else
	return 0;
#endif
}
*/
import "C"

func limitMallocArenas(n int) bool { return C.limit_arenas(C.int(n)) == 1 }
