module github.com/execspec/execspec

go 1.26.0

require (
	github.com/anishathalye/porcupine v1.3.1
	golang.org/x/exp v0.0.0-20261014143641-f0251eb4aa3e
	golang.org/x/mod v0.43.0
	golang.org/x/sys v0.49.0
	golang.org/x/tools v0.52.0
	pgregory.net/rapid v1.3.0
)

require golang.org/x/sync v0.24.0 // indirect
