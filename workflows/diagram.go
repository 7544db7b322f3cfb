package workflows

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

// Node is a step placed in a workflow's diagram: its layer (0 for steps that need
// nothing; one past the deepest step it needs otherwise) and its position in that
// layer.
type Node struct {
	Step    string
	Tool    string
	If      bool // the step has an if condition
	Foreach bool // the step fans out over a list
	Layer   int
	Pos     int
}

// Edge is a needs relation: From must end before To starts.
type Edge struct{ From, To int }

// Layout is a workflow's steps placed in layers, with the needs between them.
type Layout struct {
	Nodes  []Node
	Edges  []Edge
	Layers [][]int // each layer's nodes, in order
}

// LayOut places a definition's needs graph in layers: a step sits one layer below the
// deepest step it needs, so every edge points down. Within a layer steps keep the
// definition's order, then each layer below the first is ordered by the mean position
// of the steps it needs, which uncrosses most edges. Needs naming no step are left
// out, and a cycle (which a save refuses) is broken where it closes.
func LayOut(def *Definition) Layout {
	var l Layout
	index := map[string]int{}
	for i, s := range def.Steps {
		if _, dup := index[s.Name]; !dup {
			index[s.Name] = i
		}
		l.Nodes = append(l.Nodes, Node{Step: s.Name, Tool: s.Tool, If: s.If != "", Foreach: s.Foreach != ""})
	}
	parents := make([][]int, len(def.Steps))
	for i, s := range def.Steps {
		seen := map[int]bool{}
		for _, n := range s.Needs {
			j, ok := index[n]
			if !ok || j == i || seen[j] {
				continue
			}
			seen[j] = true
			parents[i] = append(parents[i], j)
		}
	}
	// Depth-first layering; an edge back into the step being placed is a cycle and
	// does not count.
	const (
		unplaced = iota
		placing
		placed
	)
	state := make([]int, len(l.Nodes))
	var place func(i int) int
	place = func(i int) int {
		switch state[i] {
		case placed:
			return l.Nodes[i].Layer
		case placing:
			return -1
		}
		state[i] = placing
		layer := 0
		kept := parents[i][:0:0]
		for _, j := range parents[i] {
			pl := place(j)
			if pl < 0 {
				continue
			}
			kept = append(kept, j)
			layer = max(layer, pl+1)
		}
		parents[i] = kept
		state[i] = placed
		l.Nodes[i].Layer = layer
		return layer
	}
	for i := range l.Nodes {
		place(i)
	}
	for i := range l.Nodes {
		for _, j := range parents[i] {
			l.Edges = append(l.Edges, Edge{From: j, To: i})
		}
		for len(l.Layers) <= l.Nodes[i].Layer {
			l.Layers = append(l.Layers, nil)
		}
		l.Layers[l.Nodes[i].Layer] = append(l.Layers[l.Nodes[i].Layer], i)
	}
	for li, layer := range l.Layers {
		if li > 0 {
			mean := map[int]float64{}
			for _, i := range layer {
				sum := 0.0
				for _, j := range parents[i] {
					sum += float64(l.Nodes[j].Pos)
				}
				mean[i] = sum / float64(max(1, len(parents[i])))
			}
			sort.SliceStable(layer, func(a, b int) bool { return mean[layer[a]] < mean[layer[b]] })
		}
		for pos, i := range layer {
			l.Nodes[i].Pos = pos
		}
	}
	return l
}

// Sizes of the drawing, in SVG user units.
const (
	nodeW, nodeH = 200, 52
	gapX, gapY   = 28, 44
	margin       = 16
	nameChars    = 24 // characters of a step's name that fit a node
	toolChars    = 28
)

// Fill colours of a node by its step's state on a run page; a step without a state is
// drawn plain.
var stateFill = map[StepState]string{
	StepRunning:   "#dbeafe",
	StepCompleted: "#dcfce7",
	StepFailed:    "#fee2e2",
	StepSkipped:   "#f3f4f6",
	StepCanceled:  "#fef3c7",
}

// Diagram draws a definition's steps as an SVG image: one box per step with its name
// and tool, an arrow for each need, a dashed border and an "if" mark on conditional
// steps, a stacked box and a "foreach" mark on fan-out steps. states, when given,
// colours each step by its state in a run and names it. Every text is escaped.
func Diagram(def *Definition, states map[string]StepState) []byte {
	l := LayOut(def)
	widest := 1
	for _, layer := range l.Layers {
		widest = max(widest, len(layer))
	}
	width := 2*margin + widest*nodeW + (widest-1)*gapX
	height := 2*margin + max(1, len(l.Layers))*nodeH + max(0, len(l.Layers)-1)*gapY
	// Each layer is centred in the drawing.
	x := func(n Node) int {
		row := len(l.Layers[n.Layer])
		rowW := row*nodeW + (row-1)*gapX
		return (width-rowW)/2 + n.Pos*(nodeW+gapX)
	}
	y := func(n Node) int { return margin + n.Layer*(nodeH+gapY) }

	var b bytes.Buffer
	title := "Steps of workflow " + def.Name
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-labelledby="t" font-family="system-ui, sans-serif">`, width, height, width, height)
	fmt.Fprintf(&b, `<title id="t">%s</title>`, esc(title))
	b.WriteString(`<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" markerHeight="8" orient="auto-start-reverse"><path d="M0 0L10 5L0 10z" fill="#475569"/></marker></defs>`)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="#ffffff"/>`, width, height)
	if len(l.Nodes) == 0 {
		fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="13" fill="#334155">No steps</text>`, margin, margin+nodeH/2)
	}
	for _, e := range l.Edges {
		from, to := l.Nodes[e.From], l.Nodes[e.To]
		x1, y1 := x(from)+nodeW/2, y(from)+nodeH
		x2, y2 := x(to)+nodeW/2, y(to)
		mid := (y1 + y2) / 2
		fmt.Fprintf(&b, `<path class="edge" data-from="%s" data-to="%s" d="M%d %dC%d %d %d %d %d %d" fill="none" stroke="#475569" stroke-width="1.5" marker-end="url(#arrow)"/>`,
			esc(from.Step), esc(to.Step), x1, y1, x1, mid, x2, mid, x2, y2)
	}
	for _, n := range l.Nodes {
		nx, ny := x(n), y(n)
		fill, stroke := "#f8fafc", "#334155"
		state, ok := states[n.Step]
		if ok {
			if f, known := stateFill[state]; known {
				fill = f
			}
		}
		fmt.Fprintf(&b, `<g class="step" data-step="%s" data-layer="%d" data-pos="%d">`, esc(n.Step), n.Layer, n.Pos)
		tip := n.Step + ": " + n.Tool
		if ok {
			tip += " (" + string(state) + ")"
		}
		fmt.Fprintf(&b, `<title>%s</title>`, esc(tip))
		if n.Foreach {
			fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" rx="6" fill="%s" stroke="%s"/>`, nx+5, ny-5, nodeW, nodeH, fill, stroke)
		}
		dash := ""
		if n.If {
			dash = ` stroke-dasharray="5 3"`
		}
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" rx="6" fill="%s" stroke="%s" stroke-width="1.5"%s/>`, nx, ny, nodeW, nodeH, fill, stroke, dash)
		fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="13" font-weight="600" fill="#0f172a">%s</text>`, nx+10, ny+21, esc(clipText(n.Step, nameChars)))
		fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="11" fill="#334155">%s</text>`, nx+10, ny+40, esc(clipText(n.Tool, toolChars)))
		// Marks in the top right corner: if, foreach, the run state.
		var marks []string
		if n.If {
			marks = append(marks, "if")
		}
		if n.Foreach {
			marks = append(marks, "foreach")
		}
		if ok {
			marks = append(marks, string(state))
		}
		if len(marks) > 0 {
			fmt.Fprintf(&b, `<text class="marks" x="%d" y="%d" font-size="10" text-anchor="end" fill="#1e3a8a">%s</text>`, nx+nodeW-8, ny+14, esc(clipText(strings.Join(marks, " · "), 20)))
		}
		b.WriteString(`</g>`)
	}
	b.WriteString(`</svg>`)
	return b.Bytes()
}

// clipText shortens s to n characters, marking the cut with an ellipsis.
func clipText(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// esc escapes text for SVG (XML) content and attribute values; characters XML cannot
// hold become U+FFFD.
func esc(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}
