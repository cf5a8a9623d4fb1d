//! One stable sort for every element type: [`sort_by`] orders the positions of the items (a
//! single `usize` sort in the binary) and moves the items into that order, so sorting a new type
//! costs a few instructions instead of another copy of the standard library's sort (the wasm
//! bundle's size).

use alloc::vec::Vec;
use core::cmp::Ordering;

/// Sorts `items` by `cmp` exactly as [`slice::sort_by`] does (stable: equal items keep their
/// order), then swaps the items into that order in place. Never inlined: one small copy per
/// element type, not one in every caller.
#[inline(never)]
pub fn sort_by<T>(items: &mut [T], mut cmp: impl FnMut(&T, &T) -> Ordering) {
    let mut order = stable_order(items.len(), &mut |a, b| cmp(&items[a], &items[b]));
    // Position `i` takes the item at `order[i]`: follow each cycle of the permutation, swapping,
    // and mark the positions done (`DONE`).
    const DONE: usize = usize::MAX;
    for start in 0..order.len() {
        let mut at = start;
        while order[at] != DONE {
            let from = order[at];
            order[at] = DONE;
            if from == start {
                break;
            }
            items.swap(at, from);
            at = from;
        }
    }
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
        use alloc::format;
        use alloc::string::String;
        for len in 0..70u32 {
            for (step, modulus) in [(37, 11), (1, 1000), (999, 1000), (7, 3), (13, 64)] {
                // (key, original position as text): equal keys must keep their order.
                let items: Vec<(u32, String)> =
                    (0..len).map(|i| (i * step % modulus, format!("{i}"))).collect();
                let (mut ours, mut std) = (items.clone(), items);
                sort_by(&mut ours, |a, b| a.0.cmp(&b.0));
                std.sort_by_key(|a| a.0);
                assert_eq!(ours, std, "len {len}, step {step}, modulus {modulus}");
            }
        }
    }
}
