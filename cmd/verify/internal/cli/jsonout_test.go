package cli

import (
	"encoding/json"
	"testing"
)

// jsonText escapes what could steer a terminal and changes nothing a
// decoder sees.
func TestJSONText(t *testing.T) {
	in := map[string]string{"trace": "a\u202eb\u2066c\u200bd\U000f0000e\u00e9f😀\u2028"}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	got := jsonText(b)
	if want := `{"trace":"a\u202eb\u2066c\u200bd\udb80\udc00eéf😀\u2028"}`; got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	var back map[string]string
	if err := json.Unmarshal([]byte(got), &back); err != nil || back["trace"] != in["trace"] {
		t.Fatalf("decodes to %q (%v), want %q", back["trace"], err, in["trace"])
	}
}
