package traces

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/execspec/execspec/model"
)

// The schema test checks traces/schema/trace-v1.schema.json against the
// code: every field the writer emits is described, every enumeration
// matches the names the code uses, and every line the writer writes is
// valid under the schema. The validator below knows the keywords the
// schema uses (type, const, enum, minimum, maximum, pattern, required,
// properties, additionalProperties, oneOf, $ref) and nothing more.

type schemaNode map[string]any

func loadSchema(t testing.TB) schemaNode {
	t.Helper()
	b, err := os.ReadFile("schema/trace-v1.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var s schemaNode
	if err := d.Decode(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

func (s schemaNode) def(name string) schemaNode {
	return schemaNode(s["$defs"].(map[string]any)[name].(map[string]any))
}

func (s schemaNode) props() map[string]any { return s["properties"].(map[string]any) }

// validate reports why v does not match node (root resolves $ref).
func validate(root, node schemaNode, v any, path string) error {
	if ref, ok := node["$ref"].(string); ok {
		return validate(root, root.def(strings.TrimPrefix(ref, "#/$defs/")), v, path)
	}
	if alts, ok := node["oneOf"].([]any); ok {
		n := 0
		var errs []string
		for _, a := range alts {
			if err := validate(root, schemaNode(a.(map[string]any)), v, path); err == nil {
				n++
			} else {
				errs = append(errs, err.Error())
			}
		}
		if n != 1 {
			return fmt.Errorf("%s: matches %d of oneOf, want 1 (%s)", path, n, strings.Join(errs, "; "))
		}
		return nil
	}
	if c, ok := node["const"]; ok && fmt.Sprint(c) != fmt.Sprint(v) {
		return fmt.Errorf("%s: %v, want %v", path, v, c)
	}
	if e, ok := node["enum"].([]any); ok && !slices.ContainsFunc(e, func(x any) bool { return x == v }) {
		return fmt.Errorf("%s: %v not in %v", path, v, e)
	}
	switch node["type"] {
	case "object":
		obj, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: not an object", path)
		}
		req, _ := node["required"].([]any)
		for _, r := range req {
			if _, ok := obj[r.(string)]; !ok {
				return fmt.Errorf("%s: %s missing", path, r)
			}
		}
		props, _ := node["properties"].(map[string]any)
		for k, x := range obj {
			if p, ok := props[k]; ok {
				if err := validate(root, schemaNode(p.(map[string]any)), x, path+"."+k); err != nil {
					return err
				}
				continue
			}
			switch ap := node["additionalProperties"].(type) {
			case bool:
				if !ap {
					return fmt.Errorf("%s: field %q not described", path, k)
				}
			case map[string]any:
				if err := validate(root, schemaNode(ap), x, path+"."+k); err != nil {
					return err
				}
			}
		}
	case "string":
		s, ok := v.(string)
		if !ok {
			return fmt.Errorf("%s: %v is not a string", path, v)
		}
		if p, ok := node["pattern"].(string); ok && !regexp.MustCompile(p).MatchString(s) {
			return fmt.Errorf("%s: %q does not match %s", path, s, p)
		}
	case "integer":
		n, ok := v.(json.Number)
		var x big.Int
		if !ok || strings.ContainsAny(n.String(), ".eE") {
			return fmt.Errorf("%s: %v is not an integer", path, v)
		}
		x.SetString(n.String(), 10)
		for key, sign := range map[string]int{"minimum": -1, "maximum": 1} {
			if lim, ok := node[key].(json.Number); ok {
				var l big.Int
				l.SetString(lim.String(), 10)
				if x.Cmp(&l) == sign {
					return fmt.Errorf("%s: %v beyond %s %v", path, n, key, lim)
				}
			}
		}
	}
	return nil
}

func validateLine(root schemaNode, line []byte) error {
	d := json.NewDecoder(bytes.NewReader(line))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return err
	}
	return validate(root, root, v, "line")
}

func enumOf(n any) []string {
	var out []string
	for _, x := range n.(map[string]any)["enum"].([]any) {
		out = append(out, x.(string))
	}
	return out
}

func TestSchemaDescribesTheCode(t *testing.T) {
	s := loadSchema(t)
	ev, hd := s.def("event").props(), s.def("header").props()
	var evKeys, hdKeys []string
	for k := range ev {
		evKeys = append(evKeys, k)
	}
	for k := range hd {
		hdKeys = append(hdKeys, k)
	}
	slices.Sort(evKeys)
	slices.Sort(hdKeys)
	want := slices.Clone(fieldNames[:])
	slices.Sort(want)
	if !slices.Equal(evKeys, want) {
		t.Errorf("schema event fields %v, the code's %v", evKeys, want)
	}
	var tags []string
	for f := range reflect.TypeFor[Header]().Fields() {
		tags = append(tags, strings.Split(f.Tag.Get("json"), ",")[0])
	}
	slices.Sort(tags)
	if !slices.Equal(hdKeys, tags) {
		t.Errorf("schema header fields %v, Header's %v", hdKeys, tags)
	}
	var rules []string
	for _, r := range model.Rules {
		rules = append(rules, r.String())
	}
	for name, pair := range map[string][2][]string{
		"kind":    {enumOf(ev["kind"]), kindNames[1:]},
		"source":  {enumOf(ev["source"]), sourceNames[1:]},
		"result":  {enumOf(ev["result"]), resultNames[1:]},
		"outcome": {enumOf(ev["outcome"]), outcomeNames[1:]},
		"rule":    {enumOf(ev["rule"]), rules},
	} {
		if !slices.Equal(pair[0], pair[1]) {
			t.Errorf("schema %s values %v, the code's %v", name, pair[0], pair[1])
		}
	}
}

func TestWrittenLinesMatchSchema(t *testing.T) {
	root := loadSchema(t)
	check := func(t fataler, trace []byte) {
		sc := bufio.NewScanner(bytes.NewReader(trace))
		sc.Buffer(nil, 1<<20)
		for n := 1; sc.Scan(); n++ {
			if err := validateLine(root, sc.Bytes()); err != nil {
				t.Fatalf("line %d %s: %v", n, sc.Bytes(), err)
			}
		}
	}
	check(t, []byte(sampleJSON))
	rapid.Check(t, func(t *rapid.T) {
		h := genHeader().Draw(t, "header")
		events := rapid.SliceOfN(genEvent(h), 1, 20).Draw(t, "events")
		var buf bytes.Buffer
		if err := WriteAll(&buf, h, events); err != nil {
			t.Fatal(err)
		}
		check(t, buf.Bytes())
	})
	// The validator can fail: lines the reader rejects, the schema rejects.
	for _, bad := range []string{
		`{"seq":1,"kind":"yield"}`,
		`{"seq":1,"kind":"spawn","task":0}`,
		`{"seq":1,"kind":"spawn","task":1,"prio":2}`,
		`{"seq":1,"kind":"take","task":1,"worker":0,"source":"remote"}`,
		`{"seq":1,"kind":"spawn","task":1,"queue":"local:x"}`,
		`{"seq":-1,"kind":"park","worker":0}`,
		`{"format":"execspec-trace","version":2,"workers":1}`,
		`{"format":"execspec-trace","version":1,"workers":0}`,
	} {
		if err := validateLine(root, []byte(bad)); err == nil {
			t.Errorf("schema accepts %s", bad)
		}
		if _, _, err := ReadAll(strings.NewReader(`{"format":"execspec-trace","version":1,"workers":1}`+"\n"+bad+"\n"), ""); err == nil {
			t.Errorf("reader accepts %s", bad)
		}
	}
}
