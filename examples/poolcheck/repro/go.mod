module github.com/execspec/execspec/examples/poolcheck/repro

go 1.26.0

require github.com/panjf2000/ants/v2 v2.12.1

require (
	github.com/alitto/pond v1.9.2 // indirect
	golang.org/x/sync v0.11.0 // indirect
)
