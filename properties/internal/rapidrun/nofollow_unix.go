//go:build unix

package rapidrun

import "syscall"

const syscallNoFollow = syscall.O_NOFOLLOW
