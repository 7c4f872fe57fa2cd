module github.com/execspec/execspec/examples/poolcheck

go 1.26.0

require (
	github.com/execspec/execspec v0.0.0
	golang.org/x/sync v0.6.0
)

require (
	golang.org/x/mod v0.43.0
	golang.org/x/sys v0.49.0 // indirect
)

replace github.com/execspec/execspec => ../..
