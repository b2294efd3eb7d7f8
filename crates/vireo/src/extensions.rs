//! Typed values a request carries from middleware to the handler.
//!
//! Written here rather than using `http::Extensions`, which boxes every value in a hash map:
//! a middleware that sets one value would cost an allocation and a free on every request
//! (measured with callgrind on the reference app: two values, about 450 instructions of
//! ~3,800 per request). Here a value of up to three words (ids, flags, instants, an `Arc`, a
//! `String`) is stored inline in its slot, larger ones in a box, and the slots live in a
//! vector that stays with the pooled request, so once warm, setting a small value allocates
//! nothing. Lookups scan the slots: a request carries a handful of values, where a linear scan
//! beats hashing.

use std::any::{type_name, TypeId};
use std::mem::{align_of, size_of, ManuallyDrop, MaybeUninit};

/// Where a value lives: three words, word-aligned.
type Storage = MaybeUninit<[usize; 3]>;

/// Whether a `T` is stored in its slot itself; otherwise the slot holds a `Box<T>`.
const fn is_inline<T>() -> bool {
    size_of::<T>() <= size_of::<Storage>() && align_of::<T>() <= align_of::<Storage>()
}

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
    slots: Vec<Slot>,
    /// Whether some slot may hold a value with something to drop; when not, clearing only
    /// forgets the slots.
    some_need_drop: bool,
}

struct Slot {
    type_id: TypeId,
    /// A `T` when `is_inline::<T>()`, else a `Box<T>`, for the `T` whose id is `type_id`.
    storage: Storage,
    /// How to drop and name what `storage` holds.
    kind: &'static SlotKind,
}

/// What a slot needs of the type it holds: one static per type, so a slot stays small.
struct SlotKind {
    /// `None` for an inline value with no drop glue (ids, flags, `&'static str`): most values
    /// middleware set, so clearing a request's slots then makes no call per slot.
    drop: Option<unsafe fn(&mut Storage)>,
    type_name: fn() -> &'static str,
}

struct KindOf<T>(std::marker::PhantomData<T>);

impl<T: 'static> KindOf<T> {
    const KIND: &'static SlotKind = &SlotKind {
        drop: if is_inline::<T>() && !std::mem::needs_drop::<T>() {
            None
        } else {
            Some(drop_value::<T>)
        },
        type_name: type_name::<T>,
    };
}

impl Drop for Slot {
    fn drop(&mut self) {
        if let Some(drop) = self.kind.drop {
            // SAFETY: `kind` was chosen for the type `storage` holds (see `Slot::write`), and
            // a slot is dropped once; values moved out by `into_value` skip this drop.
            unsafe { drop(&mut self.storage) }
        }
    }
}

/// Drop the `T` (or `Box<T>`) that `storage` holds.
///
/// # Safety
/// `storage` must hold an initialised value as [`Slot::write`] wrote it for this `T`, and it
/// must not be used again.
unsafe fn drop_value<T>(storage: &mut Storage) {
    if is_inline::<T>() {
        // SAFETY: the caller guarantees `storage` holds a `T`, written at its start; `Storage`
        // is at least as large and as aligned as `T` (`is_inline`).
        unsafe { storage.as_mut_ptr().cast::<T>().drop_in_place() }
    } else {
        // SAFETY: the caller guarantees `storage` holds a `Box<T>` written at its start.
        unsafe { storage.as_mut_ptr().cast::<Box<T>>().drop_in_place() }
    }
}

impl Slot {
    /// Write a slot holding `value` at `at`, field by field. Made whole and then moved, a slot
    /// waited on the stack and was copied with wider loads than the stores that wrote it,
    /// which stalls the copy: a third of a one-line middleware's time (perf, pipelined
    /// requests through the reference app).
    ///
    /// # Safety
    /// `at` must be valid for writing a `Slot` and aligned for one.
    unsafe fn write<T: Send + Sync + 'static>(at: *mut Slot, value: T) {
        // SAFETY: the caller guarantees `at` may be written; each field is written through a
        // raw pointer, so nothing reads the slot before it is whole. `Storage` is at least as
        // large and as aligned as `T` when `is_inline`, and a `Box<T>` is one word otherwise.
        unsafe {
            let storage = (&raw mut (*at).storage).cast::<u8>();
            if is_inline::<T>() {
                storage.cast::<T>().write(value);
            } else {
                storage.cast::<Box<T>>().write(Box::new(value));
            }
            (&raw mut (*at).type_id).write(TypeId::of::<T>());
            (&raw mut (*at).kind).write(KindOf::<T>::KIND);
        }
    }

    /// The value, when this slot holds a `T`.
    fn get<T: 'static>(&self) -> Option<&T> {
        if self.type_id != TypeId::of::<T>() {
            return None;
        }
        let at = self.storage.as_ptr();
        // SAFETY: the type ids match, so `storage` holds a `T` (inline) or a `Box<T>`, written
        // by `Slot::write` and initialised until the slot is dropped.
        Some(unsafe {
            if is_inline::<T>() {
                &*at.cast::<T>()
            } else {
                &**at.cast::<Box<T>>()
            }
        })
    }

    /// The value, to change, when this slot holds a `T`.
    fn get_mut<T: 'static>(&mut self) -> Option<&mut T> {
        if self.type_id != TypeId::of::<T>() {
            return None;
        }
        let at = self.storage.as_mut_ptr();
        // SAFETY: as in `get`; the slot is borrowed mutably, so the reference is unique.
        Some(unsafe {
            if is_inline::<T>() {
                &mut *at.cast::<T>()
            } else {
                &mut **at.cast::<Box<T>>()
            }
        })
    }

    /// Move the value out of a slot that holds a `T`.
    ///
    /// # Safety
    /// The slot must hold a `T` (`self.type_id == TypeId::of::<T>()`).
    unsafe fn into_value<T: 'static>(self) -> T {
        // The value is moved out below, so the slot's own drop must not run.
        let slot = ManuallyDrop::new(self);
        let at = slot.storage.as_ptr();
        // SAFETY: the caller guarantees the slot holds a `T` (inline) or a `Box<T>`; it is read
        // once, and the slot is never dropped, so the value is not dropped twice.
        unsafe {
            if is_inline::<T>() {
                at.cast::<T>().read()
            } else {
                *at.cast::<Box<T>>().read()
            }
        }
    }
}

impl Extensions {
    /// Store `value`, returning the value of the same type stored before, if any.
    pub fn insert<T: Send + Sync + 'static>(&mut self, value: T) -> Option<T> {
        let previous = self.remove::<T>();
        self.slots.reserve(1);
        self.some_need_drop |= KindOf::<T>::KIND.drop.is_some();
        let len = self.slots.len();
        // SAFETY: `reserve` made room for a slot at `len`, which is written whole before the
        // length takes it in.
        unsafe {
            Slot::write(self.slots.as_mut_ptr().add(len), value);
            self.slots.set_len(len + 1);
        }
        previous
    }

    /// The stored value of type `T`.
    pub fn get<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.slots.iter().find_map(Slot::get::<T>)
    }

    /// The stored value of type `T`, to change.
    pub fn get_mut<T: Send + Sync + 'static>(&mut self) -> Option<&mut T> {
        self.slots.iter_mut().find_map(Slot::get_mut::<T>)
    }

    /// Take out the stored value of type `T`.
    pub fn remove<T: Send + Sync + 'static>(&mut self) -> Option<T> {
        let index = self
            .slots
            .iter()
            .position(|slot| slot.type_id == TypeId::of::<T>())?;
        let slot = self.slots.swap_remove(index);
        // SAFETY: the slot's type id is `T`'s.
        Some(unsafe { slot.into_value::<T>() })
    }

    /// Whether a value of type `T` is stored.
    pub fn contains<T: Send + Sync + 'static>(&self) -> bool {
        self.slots
            .iter()
            .any(|slot| slot.type_id == TypeId::of::<T>())
    }

    /// How many values are stored.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Whether no value is stored.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Drop every value, keeping the room for them.
    pub fn clear(&mut self) {
        if self.some_need_drop {
            self.slots.clear();
            self.some_need_drop = false;
        } else {
            // SAFETY: no slot holds a value with a drop (`some_need_drop` is set by every
            // insert of such a value), so dropping the slots would do nothing; forgetting
            // them skips a call per slot on every request.
            unsafe { self.slots.set_len(0) }
        }
    }
}

impl std::fmt::Debug for Extensions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set()
            .entries(self.slots.iter().map(|slot| (slot.kind.type_name)()))
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

    #[test]
    fn small_values_are_inline_and_large_ones_boxed() {
        assert!(is_inline::<()>());
        assert!(is_inline::<String>());
        assert!(is_inline::<Counted<2>>());
        assert!(!is_inline::<Counted<3>>());
        assert!(
            !is_inline::<u128>(),
            "16-byte alignment is more than a word"
        );
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
