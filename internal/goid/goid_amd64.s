#include "textflag.h"

// func Curg() uintptr
TEXT ·Curg(SB),NOSPLIT,$0-8
	MOVQ (TLS), AX
	MOVQ AX, ret+0(FP)
	RET
