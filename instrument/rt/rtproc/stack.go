package rtproc

// growStack grows the calling goroutine's stack while it is shallow: a
// controlled goroutine's step goes deep (the program, the scheduler's
// choice, the runtime's clock), and a stack that grows there is copied
// frame by frame (about 30 frames to walk); grown here, at the start, it
// is copied with two. The byte it returns is only there so that the
// frame is not optimised away.
//
//go:noinline
func growStack() byte {
	var buf [stackWant]byte
	buf[stackIdx] = 1
	return buf[stackIdx/2]
}

// stackWant is the frame growStack takes: the stack grows to the next
// power of two that holds it (16 KiB; 8 KiB was too little for ants'
// steps, 32 KiB cost more to clear than it saved).
const stackWant = 12 << 10

// stackGrown is the stack size growStack leaves (stackShrunk).
const stackGrown = 16 << 10

// stackIdx is read, not constant, so that buf is written for real.
var stackIdx = stackWant - 1
