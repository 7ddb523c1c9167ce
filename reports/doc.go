// Package reports renders results: terminal tables, result files (JSON,
// CSV), Markdown and self-contained HTML reports, and plots.
package reports
