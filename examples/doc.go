// Package examples holds streamha's example experiment and sweep files,
// embedded in the binary so that `streamha examples` can list them and
// write them out anywhere.
package examples
