package workflows

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"testing"
)

// place is where a step landed: layer and position.
func place(l Layout) map[string][2]int {
	out := map[string][2]int{}
	for _, n := range l.Nodes {
		out[n.Step] = [2]int{n.Layer, n.Pos}
	}
	return out
}

func edges(l Layout) []string {
	var out []string
	for _, e := range l.Edges {
		out = append(out, l.Nodes[e.From].Step+">"+l.Nodes[e.To].Step)
	}
	return out
}

func TestDiagramLayOutDiamond(t *testing.T) {
	t.Parallel()
	// Written out of order: the join first, the branches swapped.
	def := &Definition{Name: "diamond", Steps: []Step{
		{Name: "join", Tool: "slack_post_message", Needs: []string{"left", "right"}},
		{Name: "right", Tool: "github_get_issue", Needs: []string{"start"}},
		{Name: "start", Tool: "github_list_issues"},
		{Name: "left", Tool: "github_get_issue", Needs: []string{"start"}},
	}}
	l := LayOut(def)
	got := place(l)
	want := map[string][2]int{"start": {0, 0}, "right": {1, 0}, "left": {1, 1}, "join": {2, 0}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("diamond placed %v, want %v", got, want)
	}
	if got, want := fmt.Sprint(edges(l)), "[left>join right>join start>right start>left]"; got != want {
		t.Errorf("diamond edges %s, want %s", got, want)
	}
	if len(l.Layers) != 3 || len(l.Layers[1]) != 2 {
		t.Errorf("diamond layers %v, want 3 layers, 2 in the middle", l.Layers)
	}
	// The join sits centred under the branches, the start over them.
	svg := string(Diagram(def, nil))
	for _, frag := range []string{`data-step="start" data-layer="0" data-pos="0"`, `data-step="join" data-layer="2" data-pos="0"`, `data-from="start" data-to="left"`, `data-from="right" data-to="join"`} {
		if !strings.Contains(svg, frag) {
			t.Errorf("the diamond's SVG lacks %s", frag)
		}
	}
	if x := rectX(t, svg, "start"); x != rectX(t, svg, "join") || x <= rectX(t, svg, "right") || x >= rectX(t, svg, "left") {
		t.Errorf("start at x=%d, join at %d, branches at %d and %d: want start and join centred between the branches", x, rectX(t, svg, "join"), rectX(t, svg, "right"), rectX(t, svg, "left"))
	}
}

func TestDiagramLayOutChain(t *testing.T) {
	t.Parallel()
	def := &Definition{Name: "chain", Steps: []Step{
		{Name: "c", Tool: "t3", Needs: []string{"b"}},
		{Name: "a", Tool: "t1"},
		{Name: "b", Tool: "t2", Needs: []string{"a", "a", "ghost"}}, // a repeated need, and one naming no step
	}}
	l := LayOut(def)
	if got, want := fmt.Sprint(place(l)), fmt.Sprint(map[string][2]int{"a": {0, 0}, "b": {1, 0}, "c": {2, 0}}); got != want {
		t.Errorf("chain placed %s, want %s", got, want)
	}
	if got, want := fmt.Sprint(edges(l)), "[b>c a>b]"; got != want {
		t.Errorf("chain edges %s, want %s", got, want)
	}
	svg := string(Diagram(def, nil))
	if rectX(t, svg, "a") != rectX(t, svg, "c") {
		t.Errorf("a chain is not drawn in one column")
	}
}

func TestDiagramLayOutSurvivesACycle(t *testing.T) {
	t.Parallel()
	def := &Definition{Name: "loop", Steps: []Step{
		{Name: "a", Tool: "t", Needs: []string{"b"}},
		{Name: "b", Tool: "t", Needs: []string{"a"}},
		{Name: "self", Tool: "t", Needs: []string{"self"}},
	}}
	l := LayOut(def)
	if len(l.Edges) != 1 {
		t.Errorf("a cycle of two kept edges %v, want one (broken where it closes)", edges(l))
	}
	wellFormed(t, Diagram(def, nil))
}

func TestDiagramEscapesEveryText(t *testing.T) {
	t.Parallel()
	evil := `x"><script>alert(1)</script><g a='`
	def := &Definition{Name: `wf</title><script>alert(2)</script>`, Steps: []Step{
		{Name: evil, Tool: `tool&<b>"'`, If: "true"},
		{Name: "next", Tool: "t\x00\x1b", Needs: []string{evil}, Foreach: "[1]"},
	}}
	svg := Diagram(def, map[string]StepState{evil: StepState(`done"><script>`), "next": StepFailed})
	wellFormed(t, svg)
	s := string(svg)
	if strings.Contains(s, "<script") || strings.Contains(s, `"><`+"g a='") || strings.Contains(s, "<b>") || strings.Contains(s, "\x1b") {
		t.Errorf("the SVG carries unescaped text:\n%s", s)
	}
	for _, frag := range []string{"&lt;script&gt;", "tool&amp;&lt;b&gt;&#34;&#39;", `stroke-dasharray`, `>if · done&#34;&gt;`, `foreach · failed`, `fill="#fee2e2"`} {
		if !strings.Contains(s, frag) {
			t.Errorf("the SVG lacks %s:\n%s", frag, s)
		}
	}
	// Every element and attribute is one a drawing uses: no element a payload could add.
	allowed := map[string]bool{"svg": true, "title": true, "defs": true, "marker": true, "path": true, "rect": true, "g": true, "text": true}
	dec := xml.NewDecoder(bytes.NewReader(svg))
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if se, ok := tok.(xml.StartElement); ok && !allowed[se.Name.Local] {
			t.Errorf("the SVG has a <%s> element", se.Name.Local)
		}
	}
}

// wellFormed fails unless svg is well-formed XML.
func wellFormed(t *testing.T, svg []byte) {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(svg))
	for {
		_, err := dec.Token()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatalf("the SVG is not well-formed XML: %v\n%s", err, svg)
		}
	}
}

// rectX is the x of the box drawn for step in svg.
func rectX(t *testing.T, svg, step string) int {
	t.Helper()
	_, rest, ok := strings.Cut(svg, `data-step="`+step+`"`)
	if !ok {
		t.Fatalf("no step %s in the SVG", step)
	}
	_, rest, _ = strings.Cut(rest, `<rect x="`)
	var x int
	if _, err := fmt.Sscanf(rest, "%d", &x); err != nil {
		t.Fatalf("step %s's box: %v", step, err)
	}
	return x
}

func TestDiagramLayOutUncrossesEdges(t *testing.T) {
	t.Parallel()
	// Two pairs, children written in the other order than their parents.
	def := &Definition{Name: "pairs", Steps: []Step{
		{Name: "p0", Tool: "t"}, {Name: "p1", Tool: "t"},
		{Name: "c1", Tool: "t", Needs: []string{"p1"}}, {Name: "c0", Tool: "t", Needs: []string{"p0"}},
	}}
	want := map[string][2]int{"p0": {0, 0}, "p1": {0, 1}, "c0": {1, 0}, "c1": {1, 1}}
	if got := place(LayOut(def)); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("placed %v, want %v (each child under its parent)", got, want)
	}
}

// BenchmarkDiagram lays out and draws the largest workflow a save accepts: MaxSteps
// steps, each needing the two before it.
func BenchmarkDiagram(b *testing.B) {
	def := &Definition{Name: "big"}
	for i := range MaxSteps {
		s := Step{Name: fmt.Sprintf("step_%d", i), Tool: "github_get_issue"}
		for j := max(0, i-2); j < i; j++ {
			s.Needs = append(s.Needs, fmt.Sprintf("step_%d", j))
		}
		def.Steps = append(def.Steps, s)
	}
	b.ReportAllocs()
	for b.Loop() {
		if len(Diagram(def, nil)) == 0 {
			b.Fatal("empty diagram")
		}
	}
}
