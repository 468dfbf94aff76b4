// Starts GraphiQL from the options the page carries in a JSON data block (the page runs no
// inline script). Loaded before GraphiQL's bundle, so that Monaco finds its workers (served by
// this origin) and the styles the bundle creates carry the answer's nonce.
(function () {
  'use strict';
  var start = JSON.parse(document.getElementById('graphiql-start').textContent);
  var nonce = document.currentScript.nonce;

  // Monaco (the editor) creates <style> elements whose content changes with every list, widget and
  // theme, and has no nonce option, so neither a hash nor its own nonce can allow them. Stamping
  // the nonce on the styles scripts create allows exactly those: a script here can restyle the
  // page anyway (CSSOM is not under the policy), while a <style> smuggled into markup still has
  // no nonce and stays blocked, which 'unsafe-inline' would not give.
  var createElement = Document.prototype.createElement;
  Document.prototype.createElement = function () {
    var element = createElement.apply(this, arguments);
    if (element.localName === 'style') element.nonce = nonce;
    return element;
  };

  self.MonacoEnvironment = {
    globalAPI: false,
    getWorkerUrl: function (_moduleId, label) {
      return start.workers[label] || start.workers.editorWorkerService;
    },
  };
  document.addEventListener('DOMContentLoaded', function () {
    window.YogaGraphiQL.renderYogaGraphiQL(document.getElementById('root'), start.options);
  });
})();
