//! One stable sort for every element type: [`sort_by`] orders the positions of the items (a
//! single `usize` sort in the binary) and moves the items into that order, so sorting a new type
//! costs a few instructions instead of another copy of the standard library's sort (the wasm
//! bundle's size).

use alloc::vec::Vec;
use core::cmp::Ordering;

/// Sorts `items` by `cmp` exactly as [`slice::sort_by`] does (stable: equal items keep their
/// order).
pub fn sort_by<T>(items: &mut Vec<T>, mut cmp: impl FnMut(&T, &T) -> Ordering) {
    let order = stable_order(items.len(), &mut |a, b| cmp(&items[a], &items[b]));
    let mut slots: Vec<Option<T>> = items.drain(..).map(Some).collect();
    items.extend(order.into_iter().filter_map(|i| slots[i].take()));
}

/// The positions `0..len` sorted stably by `cmp`.
fn stable_order(len: usize, cmp: &mut dyn FnMut(usize, usize) -> Ordering) -> Vec<usize> {
    let mut order: Vec<usize> = (0..len).collect();
    order.sort_by(|&a, &b| cmp(a, b));
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_stably_like_the_standard_sort() {
        let items: Vec<(u8, u8)> = (0..200u16).map(|i| ((i * 37 % 11) as u8, i as u8)).collect();
        let (mut ours, mut std) = (items.clone(), items);
        sort_by(&mut ours, |a, b| a.0.cmp(&b.0));
        std.sort_by_key(|a| a.0);
        assert_eq!(ours, std);
        let mut empty: Vec<u8> = Vec::new();
        sort_by(&mut empty, u8::cmp);
        assert!(empty.is_empty());
    }
}
