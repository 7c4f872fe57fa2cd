package main

import (
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/execspec/execspec/internal/chromium"
)

// runChromium runs headless Chromium on file with a 1400×900 window and
// the extra arguments (--dump-dom, --screenshot=…), and returns its stdout.
func runChromium(t *testing.T, file string, args ...string) []byte {
	t.Helper()
	return chromium.Run(t, file, append([]string{"--hide-scrollbars", "--window-size=1400,900"}, args...)...)
}

// The README's counterexample (verify model --variant lost-wakeup), drawn
// in a real browser: the picture alone must show the lost wakeup — both
// wakes arriving while t1 is polled, each dropped, the NOTIFIED state the
// rules call for and that is missing, and t1 WAITING at the end — use the
// window's width, open at the root cause, and step with ← →. The
// screenshot is kept: in $EXECSPEC_ARTIFACTS when set, and with -rewrite
// as docs/lost-wakeup-timeline.png, the picture README.md shows.
func TestLostWakeupPictureInChromium(t *testing.T) {
	chromium.Bin(t)
	dir := t.TempDir()
	code, out, stderr := run(t, "model", "-q", "--parallel", "1", "--variant", "lost-wakeup", "--out", dir)
	if code != exitViolated {
		t.Fatalf("exit %d\n%s%s", code, out, stderr)
	}
	page := filepath.Join(dir, "lost-wakeup-no-lost-wakeup.html")
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	// Drive the page's own key handling: → → ← from the event it opens at,
	// noting the selected event after each key.
	keys := `<script>
var steps = [document.body.getAttribute("data-selected")];
["ArrowRight", "ArrowRight", "ArrowLeft"].forEach(function (k) {
  document.dispatchEvent(new KeyboardEvent("keydown", {key: k}));
  steps.push(document.body.getAttribute("data-selected"));
});
document.body.setAttribute("data-steps", steps.join(","));
</script>
</body>`
	stepped := filepath.Join(dir, "stepped.html")
	if err := os.WriteFile(stepped, []byte(strings.Replace(string(b), "</body>", keys, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	dom := string(runChromium(t, stepped, "--dump-dom"))
	count := func(re string) int { return len(regexp.MustCompile(re).FindAllString(dom, -1)) }
	if n := count(`<path [^>]*class="wake dropped"[^>]*data-task="1"`); n != 2 {
		t.Errorf("%d dropped wakes of t1 drawn, want both wakes", n)
	}
	if count(`data-dropped="1"`) == 0 {
		t.Error("no mark on t1's row where its wake was dropped")
	}
	if count(`class="ghost"`) == 0 || !strings.Contains(dom, "should be NOTIFIED") {
		t.Error("the picture does not show the NOTIFIED state the rules call for")
	}
	for _, st := range []string{"QUEUED", "RUNNING", "WAITING"} {
		if count(`data-task="1" data-state="`+st+`"`) == 0 {
			t.Errorf("t1's row never shows %s", st)
		}
	}
	if count(`id="violation-mark"`) != 1 || count(`id="symptom-mark"`) != 1 {
		t.Error("the root cause and the symptom are not both marked")
	}
	m := regexp.MustCompile(`<svg id="timeline"[^>]*data-width="(\d+)"`).FindStringSubmatch(dom)
	if m == nil {
		t.Fatal("the timeline was not drawn")
	}
	if w, _ := strconv.Atoi(m[1]); w < 1300 {
		t.Errorf("the timeline is %d px wide in a 1400 px window; want the window's width", w)
	}
	if m := regexp.MustCompile(`data-steps="([^"]*)"`).FindStringSubmatch(dom); m == nil || m[1] != "4,5,6,5" {
		t.Errorf("opened at and stepped through events %v, want 4 (the root cause), then → 5, → 6, ← 5", m)
	}
	// The screenshot.
	shots := os.Getenv("EXECSPEC_ARTIFACTS")
	if shots == "" {
		shots = t.TempDir()
	}
	shot := filepath.Join(shots, "lost-wakeup-timeline.png")
	runChromium(t, page, "--screenshot="+shot)
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(f)
	f.Close()
	if err != nil {
		t.Fatalf("the screenshot: %v", err)
	}
	if r := img.Bounds(); r.Dx() != 1400 || r.Dy() != 900 {
		t.Errorf("screenshot of %v, want 1400×900", r)
	}
	t.Logf("screenshot: %s", shot)
	if *rewrite {
		data, err := os.ReadFile(shot)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join("..", "..", "docs", "lost-wakeup-timeline.png"), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
