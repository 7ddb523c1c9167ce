// Package labs holds streamha's teaching labs — one directory per lab with
// a handout (README.md), the experiment files it uses and a blank answers
// template — and the machinery behind `streamha lab list|show|check`.
//
// A check reruns, in the simulator and deterministically (the lab's own
// embedded experiment files and seeds), whatever the lab's questions are
// about, and says per question whether the student's answer is right and
// why, with the evidence it computed. Answers files are YAML with one key
// per question (q1: k03|w=10s); a list is accepted where a question asks
// for several items.
package labs
