//go:build !linux

package storage

import "errors"

func dropCaches() error { return errors.New("dropping the page cache needs Linux") }
