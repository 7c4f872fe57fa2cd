//go:build !unix

package traces

const (
	oNoFollow = 0
	oNonBlock = 0
)

func isNoReader(error) bool { return false }
