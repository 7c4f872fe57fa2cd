module github.com/execspec/execspec/examples/ownexec

go 1.26.0

require github.com/execspec/execspec v0.0.0

require (
	github.com/anishathalye/porcupine v1.3.1 // indirect
	golang.org/x/exp v0.0.0-20261014143641-f0251eb4aa3e // indirect
	pgregory.net/rapid v1.3.0 // indirect
)

replace github.com/execspec/execspec => ../..
