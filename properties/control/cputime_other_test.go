//go:build !unix

package control

import "time"

func cpuTime() time.Duration { return 0 }
