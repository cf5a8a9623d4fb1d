// web-bench: keyboard and pointer behaviour of an ARIA tree (WAI-ARIA tree pattern): one roving
// tab stop, ↑/↓ Home/End move, → opens or enters, ← closes or goes to the parent, Enter/Space
// activate; a click on a row activates it, a click on its twisty opens or closes it.

const visible = (root) => [...root.querySelectorAll('[role="treeitem"]')].filter((li) => !li.parentElement.closest('[hidden]'));
const parentItem = (li) => li.parentElement.closest('[role="treeitem"]');
const firstChild = (li) => li.querySelector(':scope > [role="group"] [role="treeitem"]');

function moveTo(root, li) {
  if (!li) return;
  for (const other of root.querySelectorAll('[role="treeitem"][tabindex="0"]')) other.tabIndex = -1;
  li.tabIndex = 0;
  li.focus();
}

/** Wires `root` (role=tree): `activate(li)` (or null), `toggle(li, open)` for items with a group. */
export function navigate(root, { activate, toggle }) {
  root.addEventListener('keydown', (event) => {
    const li = event.target.closest('[role="treeitem"]');
    if (!li || event.altKey || event.ctrlKey || event.metaKey) return;
    const items = visible(root);
    const at = items.indexOf(li);
    const expanded = li.getAttribute('aria-expanded');
    switch (event.key) {
      case 'ArrowDown': moveTo(root, items[at + 1]); break;
      case 'ArrowUp': moveTo(root, items[at - 1]); break;
      case 'Home': moveTo(root, items[0]); break;
      case 'End': moveTo(root, items[items.length - 1]); break;
      case 'ArrowRight':
        if (expanded === 'false') toggle(li, true);
        else if (expanded === 'true') moveTo(root, firstChild(li));
        break;
      case 'ArrowLeft':
        if (expanded === 'true') toggle(li, false);
        else moveTo(root, parentItem(li));
        break;
      case 'Enter': case ' ':
        activate?.(li);
        break;
      default: return;
    }
    event.preventDefault();
    event.stopPropagation();
  });
  root.addEventListener('click', (event) => {
    const row = event.target.closest('.node');
    const li = row?.closest('[role="treeitem"]');
    if (!li) return;
    if (event.target.closest('.twisty') && li.hasAttribute('aria-expanded')) {
      toggle(li, li.getAttribute('aria-expanded') !== 'true');
      return moveTo(root, li);
    }
    moveTo(root, li);
    activate?.(li);
  });
}
