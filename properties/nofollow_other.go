//go:build !unix

package properties

const syscallNoFollow = 0
