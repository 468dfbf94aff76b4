// Progressive enhancement for the dashboard: the copy button. Everything works without it.
'use strict';

function copyStatus(button, text) {
  const region = button.closest('section')?.querySelector('.copy-status');
  if (region) region.textContent = text;
}

async function copyFrom(button) {
  const input = document.getElementById(button.dataset.copyTarget);
  if (!input) return;
  try {
    await navigator.clipboard.writeText(input.value);
  } catch {
    // Clipboard API refused (permissions, old browser): select the text for Ctrl+C instead.
    input.focus();
    input.select();
    copyStatus(button, 'Press Ctrl+C (or Cmd+C) to copy the selected key.');
    return;
  }
  button.textContent = 'Copied';
  button.classList.add('is-copied');
  copyStatus(button, 'Key copied to the clipboard.');
  setTimeout(() => {
    button.textContent = 'Copy';
    button.classList.remove('is-copied');
  }, 2500);
}

document.querySelectorAll('[data-copy-target]').forEach((button) => {
  button.hidden = false;
  button.addEventListener('click', () => void copyFrom(button));
});

// A click in the read-only key field selects all of it.
document.querySelectorAll('.key-reveal [readonly]').forEach((input) => {
  input.addEventListener('focus', () => input.select());
});
