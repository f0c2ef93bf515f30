package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBuildNative: genesisc build --target native makes an executable
// that prints what forge exec would (factorialGen is in run_test.go).
func TestBuildNative(t *testing.T) {
	if _, err := exec.LookPath("llc"); err != nil {
		t.Skip("llc is not installed")
	}
	dir := t.TempDir()
	writeFile(t, dir, "factorial.gen", factorialGen)
	code, _, stderr := genesisc(t, dir, "build", "--target", "native", "-o", "fact", "factorial.gen")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	out, err := exec.Command(filepath.Join(dir, "fact")).Output()
	if err != nil || string(out) != "3628800" {
		t.Errorf("printed %q (%v), want 3628800", out, err)
	}
}

// TestBuildNativeMissingTool: without llc the message says so.
func TestBuildNativeMissingTool(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "factorial.gen", factorialGen)
	t.Setenv("GENESIS_LLC", "no-such-llc")
	code, _, stderr := genesisc(t, dir, "build", "--target", "native", "-o", "fact", "factorial.gen")
	if code == 0 || !strings.Contains(stderr, "needs llc") {
		t.Errorf("exit %d, stderr %q: want a failure naming llc", code, stderr)
	}
}

// TestBuildGoStandalone: a Genesis program for --target go is a
// directory with its own go.mod, which go build compiles on its own.
func TestBuildGoStandalone(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go build")
	}
	dir := t.TempDir()
	writeFile(t, dir, "factorial.gen", factorialGen)
	code, _, stderr := genesisc(t, dir, "build", "--target", "go", "-o", "fact_go", "factorial.gen")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	pkg := filepath.Join(dir, "fact_go")
	if _, err := os.Stat(filepath.Join(pkg, "go.mod")); err != nil {
		t.Fatal(err)
	}
	build := exec.Command("go", "build", "-o", "fact", ".")
	build.Dir = pkg
	build.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=")
	if msg, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, msg)
	}
	out, err := exec.Command(filepath.Join(pkg, "fact")).Output()
	if err != nil || string(out) != "3628800" {
		t.Errorf("printed %q (%v), want 3628800", out, err)
	}
}
