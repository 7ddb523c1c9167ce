package experiment

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Duration is a YAML duration written with a unit ("200ms", "1s").
type Duration time.Duration

// UnmarshalYAML parses a duration string and rejects negative values.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	var s string
	if n.Kind != yaml.ScalarNode || n.Decode(&s) != nil {
		return &valueError{n.Line, n.Column, "want a duration such as 200ms"}
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return &valueError{n.Line, n.Column, fmt.Sprintf("want a duration such as 200ms, got %.80q", s)}
	}
	if v < 0 {
		return &valueError{n.Line, n.Column, fmt.Sprintf("must not be negative, got %s", s)}
	}
	*d = Duration(v)
	return nil
}

// MarshalYAML writes the duration as a string.
func (d Duration) MarshalYAML() (any, error) { return time.Duration(d).String(), nil }

// D converts to time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// Bandwidth is a YAML bit rate ("1Gbps", "100Mbps", "0" = unlimited).
type Bandwidth float64

// UnmarshalYAML parses a bit rate.
func (b *Bandwidth) UnmarshalYAML(n *yaml.Node) error {
	var s string
	if n.Kind != yaml.ScalarNode || n.Decode(&s) != nil {
		return &valueError{n.Line, n.Column, "want a bit rate such as 1Gbps"}
	}
	v, err := ParseBandwidth(s)
	if err != nil {
		return &valueError{n.Line, n.Column, err.Error()}
	}
	*b = Bandwidth(v)
	return nil
}

// MarshalYAML writes the rate in bits per second with a unit.
func (b Bandwidth) MarshalYAML() (any, error) {
	return strconv.FormatFloat(float64(b), 'g', -1, 64) + "bps", nil
}

// ParseBandwidth parses "1Gbps", "250Mbps", "10kbps", "800bps" or "0".
func ParseBandwidth(s string) (float64, error) {
	t := strings.TrimSpace(s)
	if t == "0" || t == "" || t == "unlimited" {
		return 0, nil
	}
	mult := 1.0
	for _, u := range []struct {
		suf string
		m   float64
	}{{"Gbps", 1e9}, {"Mbps", 1e6}, {"kbps", 1e3}, {"Kbps", 1e3}, {"bps", 1}} {
		if strings.HasSuffix(t, u.suf) {
			t, mult = strings.TrimSuffix(t, u.suf), u.m
			break
		}
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(t), 64)
	if err != nil || v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("want a bit rate such as 1Gbps, got %q", s)
	}
	return v * mult, nil
}
