package reports

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"html"
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/streamha/streamha/ha/metrics"
	"github.com/streamha/streamha/internal/safefile"
)

// A report is built once as a document of blocks and rendered both as
// Markdown and as self-contained HTML, so the two never disagree.

type blockKind int

const (
	bHeading blockKind = iota
	bPara
	bCode
	bTable
	bFigure
	bList
	bTerms
)

type block struct {
	kind  blockKind
	level int
	text  string
	lang  string
	table *table
	fig   *Figure
	items []string
	terms []Term
}

type document struct {
	title  string
	blocks []block
}

func (d *document) h(level int, s string) {
	d.blocks = append(d.blocks, block{kind: bHeading, level: level, text: s})
}
func (d *document) p(s string) { d.blocks = append(d.blocks, block{kind: bPara, text: s}) }
func (d *document) code(lang, s string) {
	d.blocks = append(d.blocks, block{kind: bCode, lang: lang, text: s})
}
func (d *document) tbl(t *table)     { d.blocks = append(d.blocks, block{kind: bTable, table: t}) }
func (d *document) figure(f *Figure) { d.blocks = append(d.blocks, block{kind: bFigure, fig: f}) }

// terms adds a glossary: terms and their meanings (a definition list,
// which wraps on a narrow page where a table would not).
func (d *document) terms(ts []Term) { d.blocks = append(d.blocks, block{kind: bTerms, terms: ts}) }

func (d *document) list(items []string) {
	d.blocks = append(d.blocks, block{kind: bList, items: items})
}

// cell is one table value: text, and the number behind it (for CSV/JSON).
type cell struct {
	text string
	num  float64
	isN  bool // num is valid
	null bool // no value ("–")
	// boolean: bval is the value (true/false in the files).
	boolean, bval bool
}

func txt(s string) cell { return cell{text: s} }

func numCell(v float64, prec int) cell {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return cell{text: "–", null: true}
	}
	return cell{text: strconv.FormatFloat(v, 'f', prec, 64), num: v, isN: true}
}

func optCell(p *float64, prec int) cell {
	if p == nil {
		return cell{text: "–", null: true}
	}
	return numCell(*p, prec)
}

// recoveryCell is the worst episode's recovery time, or "not recovered
// (> 9.7 s)": a null in the files, never a number. With several fault
// episodes the text says how many: "224.2 (2)".
func recoveryCell(r metrics.Recovery) cell {
	c := optCell(r.RecoveryMs, 1)
	if r.RecoveryMs == nil && r.NotRecovered {
		c = cell{text: r.RecoveryText(), null: true}
	}
	if r.EpisodeCount > 1 {
		c.text += fmt.Sprintf(" (%d)", r.EpisodeCount)
	}
	return c
}

// boolCell is "yes" or "no" (true or false in the files).
func boolCell(b bool) cell {
	if b {
		return cell{text: "yes", boolean: true, bval: true}
	}
	return cell{text: "no", boolean: true}
}

func intCell(v int64) cell { return cell{text: strconv.FormatInt(v, 10), num: float64(v), isN: true} }

// table is a header (display) with machine keys, and rows of cells.
type table struct {
	head []string
	keys []string
	rows [][]cell
}

func (t *table) markdown(b *bytes.Buffer) {
	esc := func(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
	b.WriteString("| " + strings.Join(mapStr(t.head, esc), " | ") + " |\n|")
	for i := range t.head {
		if i == 0 {
			b.WriteString("---|")
		} else {
			b.WriteString("---:|")
		}
	}
	b.WriteString("\n")
	for _, r := range t.rows {
		var cs []string
		for _, c := range r {
			cs = append(cs, esc(c.text))
		}
		b.WriteString("| " + strings.Join(cs, " | ") + " |\n")
	}
}

func (t *table) html(b *bytes.Buffer) {
	b.WriteString("<table>\n<thead><tr>")
	for _, h := range t.head {
		b.WriteString("<th>" + html.EscapeString(h) + "</th>")
	}
	b.WriteString("</tr></thead>\n<tbody>\n")
	for _, r := range t.rows {
		b.WriteString("<tr>")
		for i, c := range r {
			cls := ""
			if i > 0 && (c.isN || c.null) {
				cls = ` class="n"`
			}
			swatch := ""
			if i < len(t.keys) && t.keys[i] == "strategy" || i < len(t.head) && t.head[i] == "strategy" {
				swatch = strategySwatch(c.text)
				cls = ` class="s"` // the swatch stays beside the name
			}
			b.WriteString("<td" + cls + ">" + swatch + html.EscapeString(c.text) + "</td>")
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</tbody>\n</table>\n")
}

// csv writes the keys and the full-precision values.
func (t *table) csv() ([]byte, error) {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	if err := w.Write(t.keys); err != nil {
		return nil, err
	}
	for _, r := range t.rows {
		rec := make([]string, len(r))
		for i, c := range r {
			switch {
			case c.null:
				rec[i] = ""
			case c.boolean:
				rec[i] = strconv.FormatBool(c.bval)
			case c.isN:
				rec[i] = strconv.FormatFloat(c.num, 'g', -1, 64)
			default:
				rec[i] = c.text
			}
		}
		if err := w.Write(rec); err != nil {
			return nil, err
		}
	}
	w.Flush()
	return b.Bytes(), w.Error()
}

// records is the table as a list of objects keyed by the column keys
// (numbers as numbers, missing values as null), in column order.
func (t *table) records() []orderedRecord {
	out := make([]orderedRecord, len(t.rows))
	for i, r := range t.rows {
		rec := orderedRecord{keys: t.keys}
		for _, c := range r {
			switch {
			case c.null:
				rec.vals = append(rec.vals, nil)
			case c.boolean:
				rec.vals = append(rec.vals, c.bval)
			case c.isN:
				rec.vals = append(rec.vals, c.num)
			default:
				rec.vals = append(rec.vals, c.text)
			}
		}
		out[i] = rec
	}
	return out
}

// orderedRecord marshals as a JSON object with keys in column order.
type orderedRecord struct {
	keys []string
	vals []any
}

// MarshalJSON implements json.Marshaler.
func (r orderedRecord) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range r.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		vb, err := json.Marshal(r.vals[i])
		if err != nil {
			return nil, err
		}
		b.Write(kb)
		b.WriteByte(':')
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func mapStr(xs []string, f func(string) string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}

// markdown renders the document; figures link to NAME.png beside it.
func (d *document) markdown() []byte {
	var b bytes.Buffer
	b.WriteString("# " + d.title + "\n")
	for _, bl := range d.blocks {
		b.WriteString("\n")
		switch bl.kind {
		case bHeading:
			b.WriteString(strings.Repeat("#", bl.level) + " " + bl.text + "\n")
		case bPara:
			b.WriteString(bl.text + "\n")
		case bCode:
			b.WriteString("```" + bl.lang + "\n" + strings.TrimRight(bl.text, "\n") + "\n```\n")
		case bTable:
			bl.table.markdown(&b)
		case bFigure:
			fmt.Fprintf(&b, "![%s](%s.png)\n\n*%s* ([SVG](%s.svg))\n", bl.fig.Title, bl.fig.Name, bl.fig.Title, bl.fig.Name)
			for _, n := range bl.fig.Notes {
				b.WriteString("\n> note: " + n + "\n")
			}
		case bList:
			for _, it := range bl.items {
				b.WriteString("- " + it + "\n")
			}
		case bTerms:
			for _, t := range bl.terms {
				b.WriteString("- **" + t.Name + "**: " + t.Meaning + "\n")
			}
		}
	}
	return b.Bytes()
}

var (
	svgProlog = regexp.MustCompile(`(?s)^<\?xml[^>]*\?>\s*(<!--.*?-->\s*)?`)
	svgXMLNS  = regexp.MustCompile(`\s+xmlns(:xlink)?="[^"]*"`)
)

// inlineSVG prepares an SVG file for embedding in HTML: no XML prolog and
// no namespace declarations (HTML5 inline SVG needs none), so the page
// holds no reference to any outside resource.
func inlineSVG(svg []byte) string {
	s := svgProlog.ReplaceAllString(string(svg), "")
	s = svgXMLNS.ReplaceAllString(s, "")
	return strings.Replace(s, "<svg ", `<svg role="img" `, 1)
}

const htmlStyle = `body{font-family:system-ui,-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;color:#222;line-height:1.45}
h1{font-size:1.6em}h2{margin-top:1.8em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:1em 0;font-size:.8em;display:block;max-width:100%;overflow-x:auto}th,td{border:1px solid #ccc;padding:.2em .35em}th{background:#f3f3f3}td.n{text-align:right;font-variant-numeric:tabular-nums}td:first-child,td.s{white-space:nowrap}
pre{background:#f6f6f6;padding:.8em;overflow-x:auto}code{background:#f6f6f6}
figure{margin:1.5em 0}figure svg{max-width:100%;height:auto}figcaption{font-style:italic;color:#555}.note{color:#a33}
.sw{display:inline-block;width:.8em;height:.8em;margin-right:.35em;border-radius:2px;vertical-align:-.05em}
dl.terms{display:grid;grid-template-columns:max-content 1fr;gap:.2em .8em;font-size:.9em}dl.terms dt{font-weight:600}dl.terms dd{margin:0}
@media (max-width:600px){body{margin:1em auto;padding:0 .6em}.fig{overflow-x:auto}.fig svg{min-width:600px}dl.terms{display:block}dl.terms dd{margin:0 0 .5em 1em}code{overflow-wrap:anywhere}}`

// html renders the document as one self-contained page: inline CSS,
// inline SVG figures, no scripts, links or external assets.
func (d *document) html() []byte {
	var b bytes.Buffer
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>" + html.EscapeString(d.title) + "</title>\n<style>\n" + htmlStyle + "\n</style>\n</head>\n<body>\n")
	b.WriteString("<h1>" + html.EscapeString(d.title) + "</h1>\n")
	for _, bl := range d.blocks {
		switch bl.kind {
		case bHeading:
			id := "" // sections can be linked to: report.html#figures
			if bl.level == 2 {
				id = ` id="` + anchor(bl.text) + `"`
			}
			fmt.Fprintf(&b, "<h%d%s>%s</h%d>\n", bl.level, id, html.EscapeString(bl.text), bl.level)
		case bPara:
			b.WriteString("<p>" + inlineCode(bl.text) + "</p>\n")
		case bCode:
			b.WriteString("<pre><code>" + html.EscapeString(strings.TrimRight(bl.text, "\n")) + "</code></pre>\n")
		case bTable:
			bl.table.html(&b)
		case bFigure:
			b.WriteString("<figure>\n<div class=\"fig\">" + inlineSVG(bl.fig.SVG) + "</div><figcaption>" + html.EscapeString(bl.fig.Title) + "</figcaption>\n")
			for _, n := range bl.fig.Notes {
				b.WriteString("<p class=\"note\">note: " + html.EscapeString(n) + "</p>\n")
			}
			b.WriteString("</figure>\n")
		case bList:
			b.WriteString("<ul>\n")
			for _, it := range bl.items {
				b.WriteString("<li>" + inlineCode(it) + "</li>\n")
			}
			b.WriteString("</ul>\n")
		case bTerms:
			b.WriteString("<dl class=\"terms\">\n")
			for _, t := range bl.terms {
				b.WriteString("<dt>" + html.EscapeString(t.Name) + "</dt><dd>" + html.EscapeString(t.Meaning) + "</dd>\n")
			}
			b.WriteString("</dl>\n")
		}
	}
	b.WriteString("</body>\n</html>\n")
	return b.Bytes()
}

// anchor is the id of a section heading: "Model vs simulation" →
// "model-vs-simulation".
func anchor(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		case r == ' ' || r == '-':
			b.WriteByte('-')
		}
	}
	return b.String()
}

var backticks = regexp.MustCompile("`([^`]*)`")

// inlineCode escapes text and turns `x` into <code>x</code>.
func inlineCode(s string) string {
	return backticks.ReplaceAllString(html.EscapeString(s), "<code>$1</code>")
}

// writeDoc writes report.md, report.html, results.csv and results.json
// (the given table as records, plus extra fields) and the figures.
func writeDoc(dir string, d *document, t *table, figs []Figure, extra map[string]any) error {
	if err := WriteFigures(dir, figs); err != nil {
		return err
	}
	if err := safefile.WriteFile(filepath.Join(dir, "report.md"), d.markdown()); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	if err := safefile.WriteFile(filepath.Join(dir, "report.html"), d.html()); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	c, err := t.csv()
	if err != nil {
		return fmt.Errorf("write results.csv: %w", err)
	}
	if err := safefile.WriteFile(filepath.Join(dir, "results.csv"), c); err != nil {
		return fmt.Errorf("write results.csv: %w", err)
	}
	obj := map[string]any{"rows": t.records()}
	for k, v := range extra {
		obj[k] = v
	}
	return WriteJSON(filepath.Join(dir, "results.json"), obj)
}
