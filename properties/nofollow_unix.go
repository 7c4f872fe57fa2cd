//go:build unix

package properties

import "syscall"

const syscallNoFollow = syscall.O_NOFOLLOW
