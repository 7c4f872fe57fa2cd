package modversion

import "testing"

func TestInPath(t *testing.T) {
	for _, c := range []struct{ file, module, want string }{
		{"/root/go/pkg/mod/github.com/panjf2000/ants/v2@v2.12.1/pool.go", "github.com/panjf2000/ants/v2", "v2.12.1"},
		{"github.com/panjf2000/ants/v2@v2.12.1/pool.go", "github.com/panjf2000/ants/v2", "v2.12.1"}, // -trimpath
		{"/m/github.com/sourcegraph/conc@v0.3.1-0.20240121214520-5f936abd7ae8/pool/pool.go", "github.com/sourcegraph/conc", "v0.3.1-0.20240121214520-5f936abd7ae8"},
		{"/m/github.com/!burnt!sushi/toml@v1.2.0/decode.go", "github.com/BurntSushi/toml", "v1.2.0"},
		{"/m/github.com/panjf2000/ants/v2@v2.12.1/pool.go", "github.com/panjf2000/ants", ""}, // another module
		{"/m/xgithub.com/panjf2000/ants/v2@v2.12.1/pool.go", "github.com/panjf2000/ants/v2", ""},
		{"/src/ants/pool.go", "github.com/panjf2000/ants/v2", ""},                                              // a replacement directory
		{"/tmp/b/mod/github.com_panjf2000_ants_v2@v2.11.3/pool.go", "github.com/panjf2000/ants/v2", "v2.11.3"}, // instrument's copy
		{"/tmp/b/mod/github.com_panjf2000_ants_v2@v2.11.3/pool.go", "github.com/panjf2000/ants", ""},
	} {
		got, ok := InPath(c.file, c.module)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("InPath(%q, %q) = %q, %v; want %q", c.file, c.module, got, ok, c.want)
		}
	}
}
