module github.com/execspec/execspec/examples/poolcheck

go 1.26.0

require (
	github.com/alitto/pond v1.9.2
	github.com/alitto/pond/v2 v2.1.6
	github.com/execspec/execspec v0.0.0
	github.com/panjf2000/ants/v2 v2.11.4
	github.com/sourcegraph/conc v0.3.0
	golang.org/x/sync v0.24.0
)

require (
	go.uber.org/atomic v1.7.0 // indirect
	go.uber.org/multierr v1.9.0 // indirect
	golang.org/x/exp v0.0.0-20261014143641-f0251eb4aa3e // indirect
	golang.org/x/mod v0.43.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	pgregory.net/rapid v1.3.0 // indirect
)

replace github.com/execspec/execspec => ../..
