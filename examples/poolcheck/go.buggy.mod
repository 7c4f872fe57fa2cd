module github.com/execspec/execspec/examples/poolcheck

go 1.26.0

require (
	github.com/alitto/pond/v2 v2.5.0
	github.com/execspec/execspec v0.0.0
	github.com/panjf2000/ants/v2 v2.11.3
	github.com/sourcegraph/conc v0.3.0
	golang.org/x/sync v0.11.0
)

require (
	github.com/alitto/pond v1.9.1 // indirect
	go.uber.org/atomic v1.7.0 // indirect
	go.uber.org/multierr v1.9.0 // indirect
	golang.org/x/mod v0.43.0
	golang.org/x/sys v0.49.0 // indirect
)

replace github.com/execspec/execspec => ../..
