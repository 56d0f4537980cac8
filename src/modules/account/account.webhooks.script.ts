/**
 * The webhooks page's script, served as /account/assets/webhooks.js after account.js (which toggles
 * the "Add endpoint" form, asks to confirm Remove and copies a just-created secret). It opens the
 * form again when the server refused its URL, and moves the focus to where the user goes next. Plain JavaScript in a string: served as is.
 */
export const WEBHOOKS_SCRIPT = `// chatlog: the webhooks page of the account screen.
for (const button of document.querySelectorAll('button[data-action="issue"]')) {
  const form = document.getElementById(button.getAttribute('aria-controls'));
  if (!form) continue;
  const field = form.querySelector('input[name="url"]');
  button.addEventListener('click', () => {
    if (!form.hidden) field?.focus();
  });
  // Refused: the form stays open, its URL and the reason in it.
  if (form.dataset.open === 'true') {
    form.hidden = false;
    button.setAttribute('aria-expanded', 'true');
    field?.focus();
  }
}

// After an endpoint was added, its secret's copy button has the focus (Enter copies it).
const copySecret = document.querySelector('button[data-action="copy-secret"]');
if (copySecret) {
  copySecret.focus();
  copySecret.scrollIntoView({ block: 'center' });
}
`;
