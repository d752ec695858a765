package broker

import (
	"encoding/json"

	"github.com/letterbox-dev/letterbox/broker/policy"
	"github.com/letterbox-dev/letterbox/broker/storage"
)

// The admin state in the store's metadata: tenants, namespace policies, topic records (the
// terminated mark), topic policies and resource groups, each under its bucket as JSON, written
// as it changes and read back once at start.

// persistAdmin stores v as JSON under key in bucket (nil deletes it).
func (b *Broker) persistAdmin(bucket, key string, v any) error {
	var data []byte
	if v != nil {
		var err error
		if data, err = json.Marshal(v); err != nil {
			return err
		}
	}
	err := b.store.Metadata().Update(func(tx storage.MetadataTx) error {
		if data == nil {
			return tx.Delete(bucket, key)
		}
		return tx.Put(bucket, key, data)
	})
	if err != nil {
		return adminErr(ErrPreconditionFailed, "cannot store %s %s: %v", bucket, key, err)
	}
	return nil
}

// recoverAdmin loads tenants, namespaces with their policies and terminated topics from the
// store. Called by recover, before the broker serves anything.
func (b *Broker) recoverAdmin() error {
	meta := b.store.Metadata()
	a, unlock := b.adminLocked()
	defer unlock()
	var bad error
	keep := func(err error) {
		if bad == nil {
			bad = err
		}
	}
	err := meta.Scan(storage.BucketTenants, "", func(key string, v []byte) bool {
		var t TenantInfo
		if err := json.Unmarshal(v, &t); err != nil {
			keep(err)
			return true
		}
		a.tenants[key] = &t
		return true
	})
	if err != nil {
		return err
	}
	err = meta.Scan(storage.BucketNamespaces, "", func(key string, v []byte) bool {
		p := &policy.Policies{}
		if err := json.Unmarshal(v, p); err != nil {
			keep(err)
			return true
		}
		// Namespaces stored before their bundles were checked may hold a count alone.
		if nb, err := policy.CheckBundles(p.Bundles); err == nil {
			p.Bundles = nb
		} else {
			p.Bundles = policy.DefaultBundles()
		}
		a.policies[key] = p
		b.topics.namespaces[key] = true
		return true
	})
	if err != nil {
		return err
	}
	err = meta.Scan(storage.BucketTopics, "", func(key string, v []byte) bool {
		var rec topicRecord
		if err := json.Unmarshal(v, &rec); err != nil {
			keep(err)
			return true
		}
		if rec.Terminated {
			a.terminated[key] = true
		}
		return true
	})
	if err != nil {
		return err
	}
	if err := b.recoverTopicPolicies(a); err != nil {
		return err
	}
	if err := b.recoverResourceGroups(a); err != nil {
		return err
	}
	if bad != nil {
		b.log.Error("some stored tenants, namespaces or topic properties could not be recovered", "err", bad)
	}
	return nil
}
