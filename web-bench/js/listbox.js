// web-bench: keyboard and pointer behaviour of an ARIA listbox (the session list): one roving tab
// stop on its options, ↑/↓ Home/End move focus, Enter/Space or a click select.

const options = (list) => [...list.querySelectorAll('[role="option"]')];

/** Makes `option` the list's tab stop (and focuses it when `focus`). */
export function rove(list, option, focus = false) {
  for (const o of options(list)) o.tabIndex = o === option ? 0 : -1;
  if (focus) option?.focus();
}

/** Wires `list` (role=listbox) once; `choose(option)` on Enter, Space or click. */
export function listbox(list, choose) {
  list.addEventListener('keydown', (event) => {
    const option = event.target.closest('[role="option"]');
    if (!option || event.altKey || event.ctrlKey || event.metaKey) return;
    const all = options(list);
    const at = all.indexOf(option);
    const moves = { ArrowDown: at + 1, ArrowUp: at - 1, Home: 0, End: all.length - 1 };
    if (event.key === 'Enter' || event.key === ' ') choose(option);
    else if (event.key in moves) rove(list, all[moves[event.key]] ?? option, true);
    else return;
    event.preventDefault();
  });
  list.addEventListener('click', (event) => {
    const option = event.target.closest('[role="option"]');
    if (!option) return;
    rove(list, option, true);
    choose(option);
  });
}
