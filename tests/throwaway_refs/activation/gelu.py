# placeholder: the throwaway backend evaluates the task's reference
