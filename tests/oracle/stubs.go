package main

import (
	"errors"
	"io"
)

func runGenPerf(args []string, w io.Writer) error { return errors.New("not yet") }
