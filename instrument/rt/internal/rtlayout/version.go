package rtlayout

import (
	"fmt"
	"runtime"
	"strings"
)

// CheckGo refuses Go versions whose channel layout or synctest the
// controlled runtime does not know.
func CheckGo() error {
	v := runtime.Version()
	for _, ok := range []string{"go1.25", "go1.26"} {
		if v == ok || strings.HasPrefix(v, ok+".") || strings.HasPrefix(v, ok+"rc") {
			return nil
		}
	}
	return fmt.Errorf("execspec/rt: %s is not supported: the scheduler reads channel descriptors laid out as in Go 1.25 and 1.26 and needs testing/synctest", v)
}
