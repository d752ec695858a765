package storage

import (
	"bytes"
	"errors"

	bolt "go.etcd.io/bbolt"
)

// boltMeta is Metadata in bbolt: one bbolt bucket per bucket name, created on first Put.
// Update is one bbolt read-write transaction (one fsync on commit); Get and Scan are read
// transactions. Keys must not be empty (bbolt refuses them).
type boltMeta struct{ db *bolt.DB }

func (m boltMeta) Get(bucket, key string) ([]byte, bool, error) {
	var v []byte
	var ok bool
	err := m.db.View(func(tx *bolt.Tx) error {
		v, ok = boltGet(tx, bucket, key)
		return nil
	})
	return v, ok, err
}

func boltGet(tx *bolt.Tx, bucket, key string) ([]byte, bool) {
	b := tx.Bucket([]byte(bucket))
	if b == nil {
		return nil, false
	}
	v := b.Get([]byte(key))
	if v == nil {
		return nil, false
	}
	return bytes.Clone(v), true // bbolt's slices die with the transaction
}

// Scan copies the matching pairs out and calls fn after the transaction ends, so fn may call
// Update (a bbolt write while the same goroutine holds a read transaction can deadlock).
func (m boltMeta) Scan(bucket, prefix string, fn func(string, []byte) bool) error {
	var keys []string
	var vals [][]byte
	err := m.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte(bucket))
		if b == nil {
			return nil
		}
		p := []byte(prefix)
		c := b.Cursor()
		for k, v := c.Seek(p); k != nil && bytes.HasPrefix(k, p); k, v = c.Next() {
			keys = append(keys, string(k))
			vals = append(vals, bytes.Clone(v))
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i, k := range keys {
		if !fn(k, vals[i]) {
			break
		}
	}
	return nil
}

func (m boltMeta) Update(fn func(MetadataTx) error) error {
	return m.db.Update(func(tx *bolt.Tx) error { return fn(boltTx{tx}) })
}

type boltTx struct{ tx *bolt.Tx }

var errEmptyKey = errors.New("storage: empty metadata key")

func (t boltTx) Get(bucket, key string) ([]byte, bool) { return boltGet(t.tx, bucket, key) }

func (t boltTx) Put(bucket, key string, value []byte) error {
	if key == "" {
		return errEmptyKey
	}
	b, err := t.tx.CreateBucketIfNotExists([]byte(bucket))
	if err != nil {
		return err
	}
	// bbolt keeps the slice until commit; the caller may reuse theirs.
	return b.Put([]byte(key), bytes.Clone(value))
}

func (t boltTx) Delete(bucket, key string) error {
	b := t.tx.Bucket([]byte(bucket))
	if b == nil || key == "" {
		return nil
	}
	return b.Delete([]byte(key))
}

func (t boltTx) DeletePrefix(bucket, prefix string) error {
	b := t.tx.Bucket([]byte(bucket))
	if b == nil {
		return nil
	}
	p := []byte(prefix)
	c := b.Cursor()
	for k, _ := c.Seek(p); k != nil && bytes.HasPrefix(k, p); {
		if err := c.Delete(); err != nil {
			return err
		}
		// After Delete the cursor is on the next key (or past the end) in bbolt ≥ 1.3.
		k, _ = c.Seek(p)
	}
	return nil
}
