package report

import (
	"fmt"
	"html"
	"io"
	"strings"
	"text/tabwriter"
)

// Table is a rendered table: header and rows of cells, printed as aligned
// text, Markdown or HTML.
type Table struct {
	Header []string
	Rows   [][]string
	// Numeric marks the columns aligned right (numbers); the others are
	// aligned left.
	Numeric []bool
}

func (t *Table) numeric(i int) bool { return i < len(t.Numeric) && t.Numeric[i] }

// Text writes the table as kubectl prints tables: columns separated by at
// least two spaces, numbers aligned right, text aligned left. Cells are
// printed as SafeLine escapes them, and measured so.
func (t *Table) Text(w io.Writer) error {
	t = t.safe()
	width := make([]int, len(t.Header))
	measure := func(row []string) {
		for i, c := range row {
			if i < len(width) {
				width[i] = max(width[i], len([]rune(c)))
			}
		}
	}
	measure(t.Header)
	for _, r := range t.Rows {
		measure(r)
	}
	var b strings.Builder
	line := func(row []string) {
		var l strings.Builder
		for i := range width {
			c := ""
			if i < len(row) {
				c = row[i]
			}
			pad := strings.Repeat(" ", width[i]-len([]rune(c)))
			if i > 0 {
				l.WriteString("  ")
			}
			if t.numeric(i) {
				l.WriteString(pad + c)
			} else {
				l.WriteString(c + pad)
			}
		}
		b.WriteString(strings.TrimRight(l.String(), " ") + "\n")
	}
	line(t.Header)
	for _, r := range t.Rows {
		line(r)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Markdown writes the table as a GitHub-flavoured Markdown table, its
// cells as SafeLine escapes them.
func (t *Table) Markdown(w io.Writer) error {
	t = t.safe()
	esc := func(s string) string {
		if s == "" {
			return " "
		}
		return strings.ReplaceAll(s, "|", `\|`)
	}
	var b strings.Builder
	b.WriteString("|")
	for _, h := range t.Header {
		b.WriteString(" " + esc(h) + " |")
	}
	b.WriteString("\n|")
	for i := range t.Header {
		if t.numeric(i) {
			b.WriteString("---:|")
		} else {
			b.WriteString("---|")
		}
	}
	b.WriteString("\n")
	for _, r := range t.Rows {
		b.WriteString("|")
		for i := range t.Header {
			b.WriteString(" " + esc(cellOf(r, i)) + " |")
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// HTML writes the table as an HTML <table> element, its cells as
// SafeLine escapes them.
func (t *Table) HTML(w io.Writer) error {
	t = t.safe()
	var b strings.Builder
	cell := func(tag string, i int, c string) {
		class := ""
		if t.numeric(i) {
			class = ` class="num"`
		}
		fmt.Fprintf(&b, "<%s%s>%s</%s>", tag, class, html.EscapeString(c), tag)
	}
	b.WriteString("<table>\n<thead><tr>")
	for i, h := range t.Header {
		cell("th", i, h)
	}
	b.WriteString("</tr></thead>\n<tbody>\n")
	for _, r := range t.Rows {
		b.WriteString("<tr>")
		for i := range t.Header {
			cell("td", i, cellOf(r, i))
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</tbody>\n</table>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// keyValues writes "key:  value" lines aligned on the values, each key and
// value as SafeLine escapes it (a tab or a newline in a value would break
// the alignment or start a line of its own).
func keyValues(w io.Writer, kv [][2]string) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, p := range kv {
		if p[1] == "" {
			continue
		}
		p = [2]string{SafeLine(p[0]), SafeLine(p[1])}
		if p[0] == "" {
			fmt.Fprintf(tw, "\t%s\n", p[1]) // a continuation line
			continue
		}
		fmt.Fprintf(tw, "%s:\t%s\n", p[0], p[1])
	}
	return tw.Flush()
}

// cellOf is the row's cell in column i, empty where the row is short.
func cellOf(r []string, i int) string {
	if i < len(r) {
		return r[i]
	}
	return ""
}

// safe is a copy of the table with its header and cells as SafeLine
// escapes them.
func (t *Table) safe() *Table {
	out := &Table{Header: make([]string, len(t.Header)), Numeric: t.Numeric, Rows: make([][]string, len(t.Rows))}
	for i, h := range t.Header {
		out.Header[i] = SafeLine(h)
	}
	for i, r := range t.Rows {
		out.Rows[i] = make([]string, len(r))
		for j, c := range r {
			out.Rows[i][j] = SafeLine(c)
		}
	}
	return out
}
