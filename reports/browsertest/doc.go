// Package browsertest renders pages in a headless Chromium for the tests
// that check what a person sees: a run or sweep report, the page of
// `streamha serve`. A test skips when no Chromium is installed
// (`apt-get install chromium`; .ci/run installs it).
package browsertest
