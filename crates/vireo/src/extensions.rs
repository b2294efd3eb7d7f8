//! Typed values a request carries from middleware to the handler.
//!
//! Not `http::Extensions`, which keeps its values in a hash map and boxes each anew: here each
//! value has a box of its own that outlives the value. Clearing drops the values and keeps the
//! boxes, and the set stays with the pooled request, so once warm, a middleware that sets a
//! value of the same type on every request allocates nothing. Lookups scan the entries: a
//! request carries a handful of values, where a linear scan beats hashing.

use std::any::{type_name, Any, TypeId};

/// Boxes kept for types no value is set of, at most: a pooled request that saw many types
/// keeps room for only this many.
const KEPT_ENTRIES: usize = 16;

/// A set of values keyed by their type: at most one value of each type.
///
/// ```
/// let mut ext = vireo::Extensions::default();
/// ext.insert(7u32);
/// ext.insert(String::from("ann"));
/// assert_eq!(ext.get::<u32>(), Some(&7));
/// assert_eq!(ext.insert(8u32), Some(7));
/// assert_eq!(ext.remove::<String>().as_deref(), Some("ann"));
/// assert_eq!(ext.len(), 1);
/// ```
#[derive(Default)]
pub struct Extensions {
    /// At most one entry per type, set or not.
    entries: Vec<Entry>,
}

/// The box for one type's value.
struct Entry {
    /// The id of `T`, kept here so that a scan makes no call.
    type_id: TypeId,
    /// An `Option<T>`: `None` once the value is taken or dropped, except for a type with
    /// nothing to drop, whose last value is left in place when cleared.
    value: Box<dyn Any + Send + Sync>,
    /// Whether `value` holds the set value.
    set: bool,
    kind: &'static Kind,
}

/// What an entry needs of its type: one static per type, so an entry stays small.
struct Kind {
    /// Drops the value in an entry's box, keeping the box; `None` for a type with nothing to
    /// drop (ids, flags, `&'static str`: most values middleware set), so clearing those makes
    /// no call.
    clear: Option<fn(&mut (dyn Any + Send + Sync))>,
    type_name: fn() -> &'static str,
}

struct KindOf<T>(std::marker::PhantomData<T>);

impl<T: Send + Sync + 'static> KindOf<T> {
    const KIND: &'static Kind = &Kind {
        clear: if std::mem::needs_drop::<T>() {
            Some(clear_value::<T>)
        } else {
            None
        },
        type_name: type_name::<T>,
    };
}

/// Drop the `T` in a box that holds an `Option<T>`.
fn clear_value<T: Send + Sync + 'static>(value: &mut (dyn Any + Send + Sync)) {
    if let Some(slot) = value.downcast_mut::<Option<T>>() {
        *slot = None;
    }
}

impl Entry {
    /// The box, when this entry is `T`'s.
    fn slot<T: Send + Sync + 'static>(&self) -> Option<&Option<T>> {
        if self.type_id != TypeId::of::<T>() {
            return None;
        }
        self.value.downcast_ref::<Option<T>>()
    }

    /// The box, to change, when this entry is `T`'s.
    fn slot_mut<T: Send + Sync + 'static>(&mut self) -> Option<&mut Option<T>> {
        if self.type_id != TypeId::of::<T>() {
            return None;
        }
        self.value.downcast_mut::<Option<T>>()
    }
}

impl Extensions {
    /// Store `value`, returning the value of the same type stored before, if any.
    pub fn insert<T: Send + Sync + 'static>(&mut self, value: T) -> Option<T> {
        for entry in &mut self.entries {
            if let Some(slot) = entry.slot_mut::<T>() {
                // A cleared entry of a type with nothing to drop still holds its last value:
                // that one is not returned.
                let previous = slot.replace(value);
                let was_set = std::mem::replace(&mut entry.set, true);
                return previous.filter(|_| was_set);
            }
        }
        self.entries.push(Entry {
            type_id: TypeId::of::<T>(),
            value: Box::new(Some(value)),
            set: true,
            kind: KindOf::<T>::KIND,
        });
        None
    }

    /// The stored value of type `T`.
    pub fn get<T: Send + Sync + 'static>(&self) -> Option<&T> {
        let entry = self
            .entries
            .iter()
            .find(|e| e.type_id == TypeId::of::<T>())?;
        if !entry.set {
            return None;
        }
        entry.slot::<T>()?.as_ref()
    }

    /// The stored value of type `T`, to change.
    pub fn get_mut<T: Send + Sync + 'static>(&mut self) -> Option<&mut T> {
        let entry = self
            .entries
            .iter_mut()
            .find(|e| e.type_id == TypeId::of::<T>())?;
        if !entry.set {
            return None;
        }
        entry.slot_mut::<T>()?.as_mut()
    }

    /// Take out the stored value of type `T`.
    pub fn remove<T: Send + Sync + 'static>(&mut self) -> Option<T> {
        let entry = self
            .entries
            .iter_mut()
            .find(|e| e.type_id == TypeId::of::<T>())?;
        if !std::mem::replace(&mut entry.set, false) {
            return None;
        }
        entry.slot_mut::<T>()?.take()
    }

    /// Whether a value of type `T` is stored.
    pub fn contains<T: Send + Sync + 'static>(&self) -> bool {
        self.entries
            .iter()
            .any(|e| e.set && e.type_id == TypeId::of::<T>())
    }

    /// How many values are stored.
    pub fn len(&self) -> usize {
        self.entries.iter().filter(|e| e.set).count()
    }

    /// Whether no value is stored.
    pub fn is_empty(&self) -> bool {
        !self.entries.iter().any(|e| e.set)
    }

    /// Drop every value, keeping the room for them.
    pub fn clear(&mut self) {
        for entry in &mut self.entries {
            if std::mem::replace(&mut entry.set, false) {
                if let Some(clear) = entry.kind.clear {
                    clear(&mut *entry.value);
                }
            }
        }
        self.entries.truncate(KEPT_ENTRIES);
    }
}

impl std::fmt::Debug for Extensions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set()
            .entries(
                self.entries
                    .iter()
                    .filter(|e| e.set)
                    .map(|e| (e.kind.type_name)()),
            )
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    /// Counts its drops through a shared counter; `N` pads it to a chosen size.
    struct Counted<const N: usize>(Arc<AtomicUsize>, [u64; N]);

    impl<const N: usize> Drop for Counted<N> {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// Where each entry's box is.
    fn boxes(ext: &Extensions) -> Vec<*const ()> {
        ext.entries
            .iter()
            .map(|e| &*e.value as *const (dyn Any + Send + Sync) as *const ())
            .collect()
    }

    #[test]
    fn a_cleared_set_keeps_its_boxes_for_values_of_the_same_types() {
        let drops = Arc::new(AtomicUsize::new(0));
        let mut ext = Extensions::default();
        ext.insert(1u32);
        ext.insert(Counted(drops.clone(), [0; 4]));
        let before = boxes(&ext);
        ext.clear();
        assert!(ext.is_empty() && ext.get::<u32>().is_none());
        assert_eq!(ext.insert(Counted(drops.clone(), [0; 4])).map(|_| ()), None);
        assert_eq!(ext.insert(2u32), None, "a cleared value is not returned");
        assert_eq!(ext.get::<u32>(), Some(&2));
        assert_eq!(boxes(&ext), before);
        assert_eq!(drops.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn clearing_keeps_room_for_a_bounded_number_of_types() {
        let mut ext = Extensions::default();
        // Arrays of 18 lengths: 18 types.
        macro_rules! set_each {
            ($($n:literal)*) => { $(ext.insert([0u8; $n]);)* };
        }
        set_each!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17);
        assert_eq!(ext.len(), 18);
        ext.clear();
        assert_eq!(ext.entries.len(), KEPT_ENTRIES);
        assert!(ext.is_empty());
    }

    #[test]
    fn values_of_each_kind_are_stored_read_changed_and_removed() {
        let mut ext = Extensions::default();
        ext.insert(());
        ext.insert(String::from("ann"));
        ext.insert([7u64; 8]);
        ext.insert(5u128);
        assert_eq!(ext.len(), 4);
        assert_eq!(ext.get::<()>(), Some(&()));
        assert_eq!(ext.get::<String>().map(String::as_str), Some("ann"));
        assert_eq!(ext.get::<[u64; 8]>(), Some(&[7u64; 8]));
        assert_eq!(ext.get::<u128>(), Some(&5));
        assert_eq!(ext.get::<u32>(), None);
        ext.get_mut::<String>().unwrap().push_str("ie");
        ext.get_mut::<[u64; 8]>().unwrap()[0] = 1;
        assert_eq!(ext.remove::<String>().as_deref(), Some("annie"));
        assert_eq!(ext.remove::<[u64; 8]>().map(|a| a[0]), Some(1));
        assert_eq!(ext.remove::<String>(), None);
        assert!(ext.contains::<u128>() && !ext.contains::<String>());
        assert_eq!(ext.len(), 2);
    }

    #[test]
    fn inserting_a_type_again_replaces_and_returns_the_old_value() {
        let mut ext = Extensions::default();
        assert_eq!(ext.insert(1u8), None);
        assert_eq!(ext.insert(2u8), Some(1));
        assert_eq!(ext.insert(vec![1; 100]), None);
        assert_eq!(ext.insert(vec![2; 100]).map(|v| v.len()), Some(100));
        assert_eq!(ext.len(), 2);
        assert_eq!(ext.get::<u8>(), Some(&2));
    }

    #[test]
    fn every_value_is_dropped_exactly_once() {
        let drops = Arc::new(AtomicUsize::new(0));
        let mut ext = Extensions::default();
        ext.insert(Counted(drops.clone(), [0; 2]));
        ext.insert(Counted(drops.clone(), [0; 16]));
        ext.insert(Counted(drops.clone(), [0; 1]));
        let removed = ext.remove::<Counted<16>>().expect("stored");
        assert_eq!(
            drops.load(Ordering::SeqCst),
            0,
            "moving out is not dropping"
        );
        drop(removed);
        assert_eq!(drops.load(Ordering::SeqCst), 1);
        ext.insert(Counted(drops.clone(), [0; 2]));
        assert_eq!(
            drops.load(Ordering::SeqCst),
            2,
            "the replaced value is dropped"
        );
        ext.clear();
        assert_eq!(drops.load(Ordering::SeqCst), 4);
        ext.insert(Counted(drops.clone(), [0; 16]));
        drop(ext);
        assert_eq!(drops.load(Ordering::SeqCst), 5);
    }

    #[test]
    fn clearing_drops_values_set_among_plain_ones_and_after_a_clear() {
        let drops = Arc::new(AtomicUsize::new(0));
        let mut ext = Extensions::default();
        ext.insert(7u32);
        ext.clear();
        ext.insert(1u8);
        ext.insert(Counted(drops.clone(), [0; 1]));
        ext.insert("plain");
        ext.clear();
        assert_eq!(drops.load(Ordering::SeqCst), 1);
        assert!(ext.is_empty());
        ext.insert(2u8);
        ext.insert(Counted(drops.clone(), [0; 16]));
        ext.clear();
        assert_eq!(
            drops.load(Ordering::SeqCst),
            2,
            "a boxed value is dropped too"
        );
    }

    #[test]
    fn debug_names_the_stored_types() {
        let mut ext = Extensions::default();
        ext.insert(1u16);
        assert_eq!(format!("{ext:?}"), "{\"u16\"}");
    }
}
