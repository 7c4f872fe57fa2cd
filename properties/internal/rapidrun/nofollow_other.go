//go:build !unix

package rapidrun

const syscallNoFollow = 0
