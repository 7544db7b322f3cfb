package usage

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// The charts Chart draws.
const (
	// ChartCalls: a bar per bucket, its calls, the errors stacked on top in red.
	ChartCalls = "calls"
	// ChartLatency: the p50 and p95 latency per bucket, as two lines.
	ChartLatency = "latency"
)

// Charts are the charts Chart draws.
var Charts = []string{ChartCalls, ChartLatency}

// Sizes of a chart, in SVG user units.
const (
	chartW, chartH = 720, 240
	padL, padR     = 56, 16
	padT, padB     = 30, 40
)

// chartStyle colours a chart like the pages, light or dark as the page is.
const chartStyle = `<style>` +
	`.bg{fill:#ffffff}.grid{stroke:#d5dae3}.txt{fill:#1d2433}.mut{fill:#5b6475}.ok{fill:#1f5fd6}.err{fill:#c62828}` +
	`.p50{stroke:#1f5fd6;fill:none}.p95{stroke:#8a5c00;fill:none}.p50d{fill:#1f5fd6}.p95d{fill:#8a5c00}` +
	`@media (prefers-color-scheme: dark){.bg{fill:#1a1e26}.grid{stroke:#343b48}.txt{fill:#e6e9ef}.mut{fill:#a3acbb}.ok{fill:#6ea0ff}.err{fill:#ff7b7b}` +
	`.p50{stroke:#6ea0ff}.p95{stroke:#e8b84a}.p50d{fill:#6ea0ff}.p95d{fill:#e8b84a}}` +
	`</style>`

// Chart draws one of o's charts (ChartCalls or ChartLatency) as an SVG image whose
// title says what it shows and whose description gives the figures; each bucket
// carries its own figures as a tooltip. Every text is escaped.
func Chart(o Overview, chart, subject string) ([]byte, error) {
	var title string
	switch chart {
	case ChartCalls:
		title = fmt.Sprintf("Calls per %s of %s over the last %s", o.Step, subject, rangeWords(o.Range))
	case ChartLatency:
		title = fmt.Sprintf("Latency (p50 and p95) per %s of %s over the last %s", o.Step, subject, rangeWords(o.Range))
	default:
		return nil, fmt.Errorf("no chart %q; charts are %s", chart, strings.Join(Charts, ", "))
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-labelledby="t d" font-family="system-ui, sans-serif">`, chartW, chartH, chartW, chartH)
	fmt.Fprintf(&b, `<title id="t">%s</title><desc id="d">%s</desc>`, esc(title), esc(describe(o)))
	b.WriteString(chartStyle)
	fmt.Fprintf(&b, `<rect class="bg" width="%d" height="%d"/>`, chartW, chartH)
	plotW, plotH := float64(chartW-padL-padR), float64(chartH-padT-padB)
	n := max(1, len(o.Buckets))
	slot := plotW / float64(n)
	x := func(i int) float64 { return float64(padL) + slot*float64(i) }

	var top float64
	unit := ""
	for _, bk := range o.Buckets {
		switch chart {
		case ChartCalls:
			top = math.Max(top, float64(bk.Calls))
		case ChartLatency:
			if bk.P95Ms != nil {
				top = math.Max(top, *bk.P95Ms)
			}
		}
	}
	if chart == ChartLatency {
		unit = " ms"
	}
	top = niceCeil(top)
	y := func(v float64) float64 { return float64(padT) + plotH - v/top*plotH }
	// Grid lines at 0, half and the top, labelled.
	for _, f := range []float64{0, 0.5, 1} {
		v := top * f
		fmt.Fprintf(&b, `<line class="grid" x1="%d" y1="%.1f" x2="%d" y2="%.1f"/>`, padL, y(v), chartW-padR, y(v))
		fmt.Fprintf(&b, `<text class="mut" x="%d" y="%.1f" font-size="11" text-anchor="end">%s</text>`, padL-6, y(v)+4, esc(number(v)+unit))
	}
	// Labels under the buckets, as many as fit.
	every := 1
	for n/every > 8 {
		every++
	}
	for i, bk := range o.Buckets {
		if i%every != 0 {
			continue
		}
		label := bk.Start.Format("Jan 2")
		if o.Step == "hour" {
			label = bk.Start.Format("15:04")
		}
		fmt.Fprintf(&b, `<text class="mut" x="%.1f" y="%d" font-size="11" text-anchor="middle">%s</text>`, x(i)+slot/2, chartH-padB+16, esc(label))
	}
	fmt.Fprintf(&b, `<text class="mut" x="%d" y="%d" font-size="11" text-anchor="end">UTC</text>`, chartW-padR, chartH-6)

	empty := o.Total.Calls == 0
	switch chart {
	case ChartCalls:
		barW := math.Max(1, slot*0.7)
		for i, bk := range o.Buckets {
			if bk.Calls == 0 {
				continue
			}
			bx := x(i) + (slot-barW)/2
			fmt.Fprintf(&b, `<g class="bucket"><title>%s</title>`, esc(bucketTip(o, bk)))
			okH := float64(bk.Calls-bk.Errors) / top * plotH
			errH := float64(bk.Errors) / top * plotH
			fmt.Fprintf(&b, `<rect class="ok" x="%.1f" y="%.1f" width="%.1f" height="%.1f"/>`, bx, y(0)-okH, barW, okH)
			if bk.Errors > 0 {
				fmt.Fprintf(&b, `<rect class="err" x="%.1f" y="%.1f" width="%.1f" height="%.1f"/>`, bx, y(0)-okH-errH, barW, errH)
			}
			b.WriteString(`</g>`)
		}
		legend(&b, []legendItem{{"ok", "calls", false}, {"err", "errors", false}})
	case ChartLatency:
		empty = true
		for _, line := range []struct {
			class string
			pick  func(Bucket) *float64
		}{{"p50", func(b Bucket) *float64 { return b.P50Ms }}, {"p95", func(b Bucket) *float64 { return b.P95Ms }}} {
			var d strings.Builder
			pen := false
			for i, bk := range o.Buckets {
				v := line.pick(bk)
				if v == nil {
					pen = false // a bucket without calls breaks the line
					continue
				}
				empty = false
				cmd := "L"
				if !pen {
					cmd = "M"
				}
				fmt.Fprintf(&d, "%s%.1f %.1f", cmd, x(i)+slot/2, y(*v))
				pen = true
				fmt.Fprintf(&b, `<circle class="%sd" cx="%.1f" cy="%.1f" r="2.5"><title>%s</title></circle>`, line.class, x(i)+slot/2, y(*v), esc(bucketTip(o, bk)))
			}
			if d.Len() > 0 {
				fmt.Fprintf(&b, `<path class="%s" d="%s" stroke-width="2"/>`, line.class, d.String())
			}
		}
		legend(&b, []legendItem{{"p50d", "p50", true}, {"p95d", "p95", true}})
	}
	if empty {
		fmt.Fprintf(&b, `<text class="txt" x="%d" y="%d" font-size="14" text-anchor="middle">No calls in this range</text>`, padL+int(plotW)/2, padT+int(plotH)/2)
	}
	b.WriteString(`</svg>`)
	return b.Bytes(), nil
}

type legendItem struct {
	class, label string
	dot          bool
}

// legend writes the chart's key in its top left corner.
func legend(b *bytes.Buffer, items []legendItem) {
	lx := padL
	for _, it := range items {
		if it.dot {
			fmt.Fprintf(b, `<circle class="%s" cx="%d" cy="14" r="4"/>`, it.class, lx+5)
		} else {
			fmt.Fprintf(b, `<rect class="%s" x="%d" y="9" width="10" height="10"/>`, it.class, lx)
		}
		fmt.Fprintf(b, `<text class="txt" x="%d" y="18" font-size="12">%s</text>`, lx+15, esc(it.label))
		lx += 24 + 8*len(it.label)
	}
}

// bucketTip is a bucket's figures in words.
func bucketTip(o Overview, bk Bucket) string {
	when := bk.Start.Format("Mon Jan 2")
	if o.Step == "hour" {
		when = bk.Start.Format("Jan 2 15:04") + " UTC"
	}
	return when + ": " + figuresWords(bk.Figures)
}

// describe is a range's figures in words: the charts' description.
func describe(o Overview) string {
	if o.Total.Calls == 0 {
		return "No calls in the last " + rangeWords(o.Range) + "."
	}
	return "In the last " + rangeWords(o.Range) + ": " + figuresWords(o.Total) + "."
}

func figuresWords(f Figures) string {
	s := plural(f.Calls, "call") + ", " + plural(f.Errors, "error")
	if f.Calls > 0 {
		s += fmt.Sprintf(" (%.1f%%)", 100*f.ErrorShare)
	}
	if f.P50Ms != nil && f.P95Ms != nil {
		s += ", p50 " + number(*f.P50Ms) + " ms, p95 " + number(*f.P95Ms) + " ms"
	}
	return s
}

func plural(n int64, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.FormatInt(n, 10) + " " + word + "s"
}

func rangeWords(r Range) string {
	switch r {
	case Range7d:
		return "7 days"
	case Range30d:
		return "30 days"
	}
	return "24 hours"
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten (1 at least).
func niceCeil(v float64) float64 {
	if v <= 1 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

// number writes v without a fraction when it has none, else with one digit.
func number(v float64) string {
	if v == math.Trunc(v) {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

// esc escapes text for SVG (XML) content and attribute values.
func esc(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}
