package main

import (
	"errors"
	"io"
)

func runBenchCEL(args []string, r io.Reader, w io.Writer) error   { return errors.New("not yet") }
func runBenchAlloc(args []string, r io.Reader, w io.Writer) error { return errors.New("not yet") }
func runGenPerf(args []string, w io.Writer) error                 { return errors.New("not yet") }
