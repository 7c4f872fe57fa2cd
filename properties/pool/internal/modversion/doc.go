// Package modversion says which version of a Go module the running
// binary links, and whether a version lies in a range.
//
// Test binaries carry no module versions in their build information, so
// Linked reads the version also from where one of the module's functions
// was compiled from: its source file in the module cache,
// ".../ants/v2@v2.12.1/pool.go" (InPath), or instrument's copy of it,
// ".../github.com_panjf2000_ants_v2@v2.12.1/pool.go". InRange places a
// version in a half-open range [from, fixed) of semantic versions, as
// properties/pool's Library acknowledges a defect for the versions it
// holds in.
package modversion
